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
