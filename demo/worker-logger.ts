import { DefaultLogger, type LogEntry } from '@temporalio/worker';

/**
 * The in-process worker's log for the demo: warnings and errors only, one
 * line each on stderr. "Activity failed" is left out: a failed tool or model
 * call already shows in the conversation, where the model reads it too.
 */
export function demoWorkerLogger(): DefaultLogger {
  return new DefaultLogger('WARN', (entry: LogEntry) => {
    if (entry.message === 'Activity failed') return;
    const error = entry.meta?.error;
    const detail = error instanceof Error ? `: ${error.message.split('\n')[0]}` : '';
    const where = typeof entry.meta?.workflowId === 'string' ? ` (${entry.meta.workflowId})` : '';
    process.stderr.write(`  worker ${entry.level}: ${entry.message}${where}${detail}\n`);
  });
}
