/**
 * Workflow time. Inside the workflow sandbox `Date` reads the time of the
 * current workflow task from history, so it replays identically; this module
 * is the one place workflow code reads it.
 */
export const nowMs = (): number => new Date().getTime();
export const nowIso = (): string => new Date().toISOString();
