/** Where MCP connection news goes; every line is already redacted. */
export interface McpLogger {
  debug(message: string): void;
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

export const consoleMcpLogger: McpLogger = {
  debug: () => undefined,
  info: (m) => console.log(`[mcp] ${m}`),
  warn: (m) => console.warn(`[mcp] ${m}`),
  error: (m) => console.error(`[mcp] ${m}`),
};

export const silentMcpLogger: McpLogger = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

/** Replaces every secret in `text` with `***`, longest first so a token inside a header value goes too. */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of [...secrets].sort((a, b) => b.length - a.length)) {
    if (secret) out = out.split(secret).join('***');
  }
  return out;
}

export function errorText(err: unknown): string {
  if (err instanceof Error) {
    const cause = (err as { cause?: unknown }).cause;
    // fetch() hides the useful part ("ECONNREFUSED ...") in its cause.
    const detail = cause instanceof Error && cause.message && !err.message.includes(cause.message) ? ` (${cause.message})` : '';
    return `${err.message}${detail}`;
  }
  return String(err);
}

/** A logger that redacts the given secrets and prefixes each line with the server name. */
export function serverLogger(logger: McpLogger, server: string, secrets: readonly string[]): McpLogger {
  const wrap = (write: (m: string) => void) => (message: string) => write(redact(`server "${server}": ${message}`, secrets));
  return { debug: wrap(logger.debug), info: wrap(logger.info), warn: wrap(logger.warn), error: wrap(logger.error) };
}
