import type { LogLevel, LogMetadata, Logger } from '@temporalio/common';
import { SecretRedactor } from '../activities/secret-redactor';

/** Secrets in a log line's metadata: strings, errors (message and stack) and nested plain objects. */
function cleanMeta(meta: unknown, redactor: SecretRedactor, depth = 0): unknown {
  if (typeof meta === 'string') return redactor.text(meta);
  if (meta instanceof Error) {
    // Logged errors are often the very objects still on their way to history: redact in place, same as activities do.
    return redactor.error(meta);
  }
  if (depth > 4 || meta === null || typeof meta !== 'object') return meta;
  if (Array.isArray(meta)) return meta.map((v) => cleanMeta(v, redactor, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(meta)) out[key] = cleanMeta(value, redactor, depth + 1);
  return out;
}

/**
 * The worker's logger with every configured secret removed from each line:
 * the SDK logs failed activities and workflow tasks with their error, which
 * may carry what a remote server echoed back.
 */
export function redactingLogger(inner: Logger, secrets: readonly string[]): Logger {
  const redactor = new SecretRedactor(secrets);
  if (redactor.empty) return inner;
  const log = (level: LogLevel, message: string, meta?: LogMetadata) =>
    inner.log(level, redactor.text(message), meta === undefined ? undefined : (cleanMeta(meta, redactor) as LogMetadata));
  return {
    log,
    trace: (m, meta) => log('TRACE', m, meta),
    debug: (m, meta) => log('DEBUG', m, meta),
    info: (m, meta) => log('INFO', m, meta),
    warn: (m, meta) => log('WARN', m, meta),
    error: (m, meta) => log('ERROR', m, meta),
  };
}

/** At most this much of one line the openai SDK logs: it logs a stream's unparseable data whole. */
const MODEL_CLIENT_LOG_CHARS = 2_000;

type ModelClientLogFn = (message: string, ...rest: unknown[]) => void;

/**
 * A logger for the openai SDK. Without one it logs to the console itself,
 * past the worker's redaction and unbounded: a stream's data line that is
 * not JSON (a proxy's error page, a server echoing the request's key) is
 * logged whole. Each line goes out with configured secrets replaced and cut
 * to MODEL_CLIENT_LOG_CHARS.
 */
export function modelClientLogger(secrets: readonly string[], write: (level: 'error' | 'warn' | 'info' | 'debug', line: string) => void = defaultWrite): Record<'error' | 'warn' | 'info' | 'debug', ModelClientLogFn> {
  const redactor = new SecretRedactor(secrets);
  const lineOf = (message: string, rest: unknown[]): string => {
    const parts = [message, ...rest.map((r) => (typeof r === 'string' ? r : safeJson(r)))];
    const text = redactor.text(parts.join(' '));
    return text.length > MODEL_CLIENT_LOG_CHARS ? `${text.slice(0, MODEL_CLIENT_LOG_CHARS)}… [${text.length - MODEL_CLIENT_LOG_CHARS} more characters]` : text;
  };
  const at = (level: 'error' | 'warn' | 'info' | 'debug'): ModelClientLogFn => (message, ...rest) => write(level, `[openai] ${lineOf(String(message), rest)}`);
  return { error: at('error'), warn: at('warn'), info: at('info'), debug: at('debug') };
}

function safeJson(value: unknown): string {
  try {
    return value instanceof Error ? `${value.name}: ${value.message}` : (JSON.stringify(value) ?? String(value));
  } catch {
    return String(value);
  }
}

function defaultWrite(level: 'error' | 'warn' | 'info' | 'debug', line: string): void {
  if (level === 'error') console.error(line);
  else if (level === 'warn') console.warn(line);
  else console.log(line);
}
