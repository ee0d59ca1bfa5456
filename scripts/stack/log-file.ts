import fs from 'node:fs';

/**
 * Appends a start marker to a server's log and returns the offset after it,
 * so a startup failure shows only this run's output, not older runs'.
 */
export function markLogStart(logFile: string, argv: readonly string[]): number {
  fs.appendFileSync(logFile, `\n===== ${new Date().toISOString()} durable-agent starts: ${argv.join(' ')}\n`);
  return fs.statSync(logFile).size;
}

/** The last `lines` lines written to the log since `fromOffset`. */
export function tailLog(logFile: string, fromOffset = 0, lines = 25): string {
  try {
    const size = fs.statSync(logFile).size;
    const start = Math.max(fromOffset, size - 64 * 1024);
    const fd = fs.openSync(logFile, 'r');
    try {
      const buffer = Buffer.alloc(size - start);
      fs.readSync(fd, buffer, 0, buffer.length, start);
      const text = buffer.toString('utf8').trimEnd();
      return text ? text.split('\n').slice(-lines).join('\n') : '(log is empty)';
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return '(no log written)';
  }
}

export function withLogTail(message: string, logFile: string, fromOffset: number): string {
  return `${message}\n--- last lines of ${logFile} ---\n${tailLog(logFile, fromOffset)}`;
}
