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
