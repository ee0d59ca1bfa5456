import { asyncLocalStorage } from '@temporalio/activity';

/** Where memory code reports what it skipped; inside an activity it is the activity's logger. */
export interface MemoryLog {
  debug(message: string, meta?: Record<string, unknown>): void;
  warn(message: string, meta?: Record<string, unknown>): void;
}

/** The running activity's logger (carries workflow and activity ids), or the console outside one. */
export const activityLog: MemoryLog = {
  debug(message, meta) {
    asyncLocalStorage.getStore()?.log.debug(message, meta);
  },
  warn(message, meta) {
    const ctx = asyncLocalStorage.getStore();
    if (ctx) ctx.log.warn(message, meta);
    else console.warn(`[memory] ${message}`, meta ?? '');
  },
};
