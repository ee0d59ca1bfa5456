import type { Client, WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { workflowIdFor } from '../../workflows/messages';

type HistoryEvent = NonNullable<Awaited<ReturnType<WorkflowHandle['fetchHistory']>>['events']>[number];

/** Where a session's wall time went, summed over its history, in ms. */
export interface Breakdown {
  /** Activity task waiting for a worker: SCHEDULED -> STARTED. */
  activityDispatch: number;
  /** Activity code running, by activity type: STARTED -> COMPLETED. */
  activityRun: Map<string, number>;
  /** Workflow task waiting for a worker: SCHEDULED -> STARTED. */
  workflowTaskQueue: number;
  /** Worker running the workflow code and the server recording it: STARTED -> COMPLETED. */
  workflowTaskRun: number;
  workflowTasks: number;
  activities: number;
  /** History size as the server stores it (protobuf bytes), and the part of it that scheduled `callModel` inputs hold. */
  historyBytes: number;
  modelInputBytes: number;
  /** The part that scheduled `saveArchive` inputs hold (a session's end), and how many there were. */
  archiveInputBytes: number;
  archives: number;
}

function ms(ts: HistoryEvent['eventTime']): number {
  if (!ts) return Number.NaN;
  return Number(ts.seconds ?? 0) * 1000 + (ts.nanos ?? 0) / 1e6;
}

export function emptyBreakdown(): Breakdown {
  return { activityDispatch: 0, activityRun: new Map(), workflowTaskQueue: 0, workflowTaskRun: 0, workflowTasks: 0, activities: 0, historyBytes: 0, modelInputBytes: 0, archiveInputBytes: 0, archives: 0 };
}

/**
 * Adds one session's history to `into`: pairs each task's events by their
 * scheduled and started ids. With `afterEventId`, only what happened after
 * that event counts (one turn of a longer history). Returns the last event id.
 */
export async function addSessionHistory(client: Client, sessionId: string, into: Breakdown, afterEventId = 0): Promise<number> {
  const history = await client.workflow.getHandle(workflowIdFor(sessionId)).fetchHistory();
  into.historyBytes += temporal.api.history.v1.History.encode(history).finish().length;
  const at = new Map<number, number>();
  const activityType = new Map<number, string>();
  let last = 0;
  for (const event of history.events ?? []) {
    const id = Number(event.eventId);
    const time = ms(event.eventTime);
    at.set(id, time);
    last = id;
    const scheduled = event.activityTaskScheduledEventAttributes;
    if (scheduled) activityType.set(id, scheduled.activityType?.name ?? '?');
    if (scheduled?.activityType?.name === 'callModel') into.modelInputBytes += temporal.api.history.v1.HistoryEvent.encode(event).finish().length;
    if (scheduled?.activityType?.name === 'saveArchive') {
      into.archiveInputBytes += temporal.api.history.v1.HistoryEvent.encode(event).finish().length;
      into.archives++;
    }
    if (id <= afterEventId) continue;
    const started = event.activityTaskStartedEventAttributes;
    if (started) into.activityDispatch += time - (at.get(Number(started.scheduledEventId)) ?? time);
    const completed = event.activityTaskCompletedEventAttributes;
    if (completed) {
      const type = activityType.get(Number(completed.scheduledEventId)) ?? '?';
      into.activityRun.set(type, (into.activityRun.get(type) ?? 0) + time - (at.get(Number(completed.startedEventId)) ?? time));
      into.activities++;
    }
    const wftStarted = event.workflowTaskStartedEventAttributes;
    if (wftStarted) into.workflowTaskQueue += time - (at.get(Number(wftStarted.scheduledEventId)) ?? time);
    const wftCompleted = event.workflowTaskCompletedEventAttributes;
    if (wftCompleted) {
      into.workflowTaskRun += time - (at.get(Number(wftCompleted.startedEventId)) ?? time);
      into.workflowTasks++;
    }
  }
  return last;
}
