/**
 * Workflow time. Inside the workflow sandbox `Date` reads the time of the
 * current workflow task from history, so it replays identically; this module
 * is the one place workflow code reads it.
 */
export const nowMs = (): number => new Date().getTime();

/*
 * The time stays the same through a workflow task, and a step stamps several
 * events in one (status changes, the model's answer, the tool's result): the
 * ISO text is made once per time. Module state, so per run; the same time
 * gives the same text, replayed or not.
 */
let isoMs = Number.NaN;
let iso = '';

export const nowIso = (): string => {
  const ms = nowMs();
  if (ms !== isoMs) {
    iso = new Date(ms).toISOString();
    isoMs = ms;
  }
  return iso;
};

/** The latest time a `Date` holds (ms since the epoch); past it `toISOString` throws. */
const LAST_DATE_MS = 8.64e15;

/**
 * `ms` as ISO text, a time past what a `Date` holds given as that last
 * time: a deadline computed from a caller's limit must not throw inside
 * workflow code (a `RangeError` there fails the task on every retry).
 */
export const isoAt = (ms: number): string => new Date(Math.max(-LAST_DATE_MS, Math.min(ms, LAST_DATE_MS))).toISOString();
