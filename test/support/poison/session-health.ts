import type { Client } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { WorkflowStreamClient } from '@temporalio/workflow-streams/client';
import { AgentEvent } from '../../../workflows/events';
import { EVENTS_TOPIC } from '../../../workflows/messages';

const { WorkflowTaskFailedCause, TimeoutType } = temporal.api.enums.v1;

/** One `WorkflowTaskFailed` (or `WorkflowTaskTimedOut`) event: the proof of a frozen (or freezing) session. */
export interface TaskFailure {
  workflowId: string;
  runId: string;
  eventId: number;
  cause: string;
  message: string;
}

/**
 * The server itself fails a workflow task with UNHANDLED_COMMAND when a
 * signal lands while the task is closing the run (continue-as-new,
 * completion); the SDK runs the task again with the signal. It is no input's
 * fault and no freeze, so it is reported apart from the failures that are.
 */
export const BENIGN_CAUSES = new Set([
  'WORKFLOW_TASK_FAILED_CAUSE_UNHANDLED_COMMAND',
  // A sticky task no worker picked up in time goes back to the normal queue: a slow worker, not a frozen session.
  'WorkflowTaskTimedOut TIMEOUT_TYPE_SCHEDULE_TO_START',
]);

/**
 * An update over the server's own 2 MB payload limit reaches the worker, but
 * its rejection (or acceptance) echoes the input back and the server refuses
 * that message: it fails the workflow task once, drops the update, and the
 * session carries on. No workflow code can avoid the echo (see
 * docs/robustness.md), so this one failure is counted apart, by cause and
 * message, and the session must still answer afterwards like any other.
 */
export function isServerOversizeRefusal(f: TaskFailure): boolean {
  if (f.cause === 'WORKFLOW_TASK_FAILED_CAUSE_BAD_UPDATE_WORKFLOW_EXECUTION_MESSAGE') return /exceeds size limit/.test(f.message);
  // Over gRPC's 4 MB, the same echo makes the server force the task closed, with no message.
  return f.cause === 'WORKFLOW_TASK_FAILED_CAUSE_FORCE_CLOSE_COMMAND' && f.message === '';
}

/** Failures that are no input's fault and freeze nothing (see above). */
export const isBenignTaskFailure = (f: TaskFailure): boolean => BENIGN_CAUSES.has(f.cause) || isServerOversizeRefusal(f);

export async function withTimeout<T>(work: Promise<T>, ms: number): Promise<{ value: T } | { error: unknown } | { timedOut: true }> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<{ timedOut: true }>((resolve) => {
    timer = setTimeout(() => resolve({ timedOut: true }), ms);
  });
  try {
    return await Promise.race([work.then((value) => ({ value }), (error: unknown) => ({ error })), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * `withTimeout` for calls through the Temporal client: past `ms` they are
 * cancelled, not left running. A call left running (an accepted update's
 * result long-poll, say) can still be in flight, or waiting to be retried,
 * when the test closes its connection; the SDK's retry interceptor then
 * starts its next attempt on the closed channel from a timer, and the
 * uncaught "Channel has been shut down" fails the test file after every test
 * in it passed.
 */
export async function callWithTimeout<T>(client: Client, call: () => Promise<T>, ms: number): Promise<{ value: T } | { error: unknown } | { timedOut: true }> {
  const controller = new AbortController();
  const r = await withTimeout(client.connection.withAbortSignal(controller.signal, call), ms);
  if ('timedOut' in r) controller.abort();
  return r;
}

/** Every run of a workflow id the server knows of, with whether it is still running. */
export async function runsOf(client: Client, workflowId: string): Promise<Array<{ runId: string; running: boolean }>> {
  const runs: Array<{ runId: string; running: boolean }> = [];
  for await (const info of client.workflow.list({ query: `WorkflowId = "${workflowId}"` })) {
    runs.push({ runId: info.runId, running: info.status.name === 'RUNNING' });
  }
  return runs;
}

/**
 * A run's history events. gRPC refuses a response over 4 MB, and the SDK
 * retries that refusal (RESOURCE_EXHAUSTED) for about 40 s before giving up,
 * so the page size comes from the history's size: all of it in one page when
 * it fits, else one event per page (a history that large holds payloads near
 * the server's 2 MB limit, and few events).
 */
async function* historyEvents(client: Client, workflowId: string, runId: string): AsyncGenerator<temporal.api.history.v1.IHistoryEvent> {
  const { namespace } = client.options;
  const described = await client.workflowService.describeWorkflowExecution({ namespace, execution: { workflowId, runId } });
  const bytes = Number(described.workflowExecutionInfo?.historySizeBytes ?? 0);
  const maximumPageSize = bytes < 3_000_000 ? 1_000 : 1;
  let nextPageToken: Uint8Array | undefined;
  do {
    const page = await client.workflowService.getWorkflowExecutionHistory({
      namespace,
      execution: { workflowId, runId },
      maximumPageSize,
      ...(nextPageToken ? { nextPageToken } : {}),
    });
    yield* page.history?.events ?? [];
    nextPageToken = page.nextPageToken?.length ? page.nextPageToken : undefined;
  } while (nextPageToken);
}

/** Whether the latest run's history holds an `UpdateAccepted` event for `updateId`: a validator's rejection writes nothing. */
export async function updateAccepted(client: Client, workflowId: string, updateId: string): Promise<boolean> {
  for await (const event of historyEvents(client, workflowId, '')) {
    if (event.workflowExecutionUpdateAcceptedEventAttributes?.protocolInstanceId === updateId) return true;
  }
  return false;
}

/** The `WorkflowTaskFailed` events of one run, decoded. */
export async function taskFailuresOf(client: Client, workflowId: string, runId: string): Promise<TaskFailure[]> {
  const out: TaskFailure[] = [];
  for await (const event of historyEvents(client, workflowId, runId)) {
    const timedOut = event.workflowTaskTimedOutEventAttributes;
    if (timedOut) {
      // A task that ran past its timeout (a handler stuck on a huge input, say) is retried like a failed one.
      const type = TimeoutType[timedOut.timeoutType ?? 0] ?? String(timedOut.timeoutType);
      out.push({ workflowId, runId, eventId: Number(event.eventId ?? 0), cause: `WorkflowTaskTimedOut ${type}`, message: 'workflow task timed out' });
      continue;
    }
    const failed = event.workflowTaskFailedEventAttributes;
    if (!failed) continue;
    out.push({
      workflowId,
      runId,
      eventId: Number(event.eventId ?? 0),
      cause: WorkflowTaskFailedCause[failed.cause ?? 0] ?? String(failed.cause),
      message: (failed.failure?.message ?? '').slice(0, 500),
    });
  }
  return out;
}

/**
 * Checks every run of a workflow id not checked yet (closed runs are
 * checked once and remembered in `closedChecked`; running ones every time).
 */
export async function taskFailuresOfAllRuns(client: Client, workflowId: string, closedChecked: Set<string>, extraRunIds: Iterable<string> = []): Promise<TaskFailure[]> {
  const runs = new Map<string, boolean>();
  for (const run of await runsOf(client, workflowId)) runs.set(run.runId, run.running);
  // Visibility lags a little behind; runs we saw ourselves are checked whatever it says.
  for (const runId of extraRunIds) if (!runs.has(runId)) runs.set(runId, true);
  const out: TaskFailure[] = [];
  for (const [runId, running] of runs) {
    if (closedChecked.has(runId)) continue;
    out.push(...(await taskFailuresOf(client, workflowId, runId)));
    if (!running) closedChecked.add(runId);
  }
  return out;
}

export interface StreamCheck {
  /** Items read from the start of what the stream keeps. */
  read: number;
  /** Items on the events topic that AgentEvent (or payload decoding) refuses, with why. */
  unparseable: Array<{ offset: number; why: string }>;
  /** Items on any other topic: only the session publishes, and only on its events topic. */
  foreignTopics: number;
  events: Array<{ offset: number; event: AgentEvent }>;
}

/**
 * Reads a session's stream from offset 0 (the start of what it keeps) up to
 * its current end with the stream library's own client, so an item that
 * `AgentClient.events` would throw on is counted, not fatal, and checks each.
 */
export async function readWholeStream(client: Client, workflowId: string): Promise<StreamCheck> {
  const stream = WorkflowStreamClient.create(client, workflowId);
  const end = await stream.getOffset();
  const check: StreamCheck = { read: 0, unparseable: [], foreignTopics: 0, events: [] };
  if (end === 0) return check;
  for await (const item of stream.subscribe(undefined, 0, { pollCooldown: 0 })) {
    check.read += 1;
    if (item.topic !== EVENTS_TOPIC) {
      check.foreignTopics += 1;
    } else {
      let data: unknown;
      try {
        data = defaultPayloadConverter.fromPayload(item.data);
      } catch (err) {
        check.unparseable.push({ offset: item.offset, why: `undecodable payload: ${String(err)}` });
        data = undefined;
      }
      if (data !== undefined) {
        const parsed = AgentEvent.safeParse(data);
        if (parsed.success) check.events.push({ offset: item.offset, event: parsed.data });
        else check.unparseable.push({ offset: item.offset, why: parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ') });
      }
    }
    if (item.offset >= end - 1) break;
  }
  return check;
}
