import { readdirSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import type { History } from '@temporalio/common/lib/proto-utils';

/** Where the recorded histories live, one `<scenario>.json` per behaviour. */
export const HISTORIES_DIR = resolve(__dirname, 'histories');

/** The corpus's history files, sorted, as absolute paths. */
export function historyFiles(dir = HISTORIES_DIR): string[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => join(dir, f));
}

export const behaviourOf = (path: string): string => basename(path, '.json');

/** True when the history holds a failed workflow task: a bug, never a behaviour to record. */
export const hasWorkflowTaskFailure = (history: History): boolean => (history.events ?? []).some((e) => e.workflowTaskFailedEventAttributes != null);
