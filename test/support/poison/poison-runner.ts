import {
  WithStartWorkflowOperation,
  WorkflowUpdateFailedError,
  WorkflowUpdateStage,
  isGrpcServiceError,
  type Client,
} from '@temporalio/client';
import { randomUUID } from 'node:crypto';
import { RawValue, type Payload } from '@temporalio/common';
import type { AgentClient } from '../../../client';
import { eventually } from '../test-env';
import { WORKFLOW_TYPE, workflowIdFor } from '../../../workflows/messages';
import type { SessionOptionsInput, SessionView, TurnResult } from '../../../workflows/session-types';
import { Delivery, type PoisonCase } from './poison-case';
import { PoisonModel, pongFor, toolTurnMessage } from './poison-model';
import type { RawArg } from './raw-json';
import { isBenignTaskFailure, readWholeStream, taskFailuresOfAllRuns, taskFailuresOf, callWithTimeout, type TaskFailure } from './session-health';

/** The real stack the cases go to. */
export interface PoisonTarget {
  client: Client;
  agent: AgentClient;
  taskQueue: string;
  model: PoisonModel;
}

export interface PoisonRunnerOptions {
  /** Session ids start with this; unique per run. */
  prefix: string;
  /** Options every poison session is started with (its sessionId is set per session). */
  sessionOptions: (sessionId: string) => SessionOptionsInput;
  /** How long one signal, update or query may take before the session counts as suspect. */
  caseTimeoutMs?: number;
  /** How long a turn (a tool-call case, or the check's normal message) may take. */
  turnTimeoutMs?: number;
}

/** One delivered case and what became of it. */
export interface CaseOutcome {
  case: PoisonCase;
  delivery: Delivery;
  /** Failure type and message of a rejection, the server's refusal, or the turn's outcome. */
  detail: string;
  /** The update's id, for updates: look for it in history to tell a validator's rejection from a handler's failure. */
  updateId?: string;
}

/** A session that stopped answering, with the cases it had been sent and what its history says. */
export interface FreezeReport {
  sessionId: string;
  cases: string[];
  why: string;
  taskFailures: TaskFailure[];
}

/** What one check of a session found. */
export interface SessionCheck {
  answered: boolean;
  why: string;
  taskFailures: TaskFailure[];
  benignTaskFailures: number;
  unparseable: Array<{ offset: number; why: string }>;
  foreignEvents: number;
  toolResults: Array<{ ok: boolean; errorType?: string }>;
  signalsIgnored: number;
}

/** Signs of the fake events the fuzzer tries to publish through the library's signal. */
const FOREIGN_MARKERS = ['call_fake', 'Transfer approved.', 'injected'];

function toPayload(arg: RawArg): RawValue {
  const payload: Payload = {
    metadata: { encoding: new TextEncoder().encode(arg.encoding ?? 'json/plain') },
    data: new TextEncoder().encode(arg.text),
  };
  return RawValue.fromPayload(payload);
}

function describeError(err: unknown): string {
  if (err instanceof WorkflowUpdateFailedError) {
    const cause = err.cause as (Error & { type?: string }) | undefined;
    return `${cause?.type ?? cause?.name ?? 'UpdateFailed'}: ${cause?.message ?? err.message}`;
  }
  if (isGrpcServiceError(err)) return `grpc ${err.code}: ${err.details ?? err.message}`;
  const e = err as Error & { type?: string; cause?: unknown };
  return `${e.type ?? e.name ?? 'Error'}: ${String(e.message ?? err).slice(0, 300)}`;
}

/** The request never reached a workflow: the client, gRPC or the server refused it. */
function isRefusal(err: unknown): boolean {
  if (isGrpcServiceError(err)) return true;
  const e = err as { name?: string; code?: unknown; message?: string };
  return e?.name === 'ServiceError' || typeof e?.code === 'number' || /grpc|message larger than|BlobSizeLimit|exceeds size limit/i.test(e?.message ?? '');
}

/**
 * A request this close to gRPC's 4 MiB message limit may be refused by the
 * server with RESOURCE_EXHAUSTED, which this SDK's client retries for about
 * 40 s before giving up. The session is not involved (the request never
 * reaches it), so such a case is given that long to come back refused.
 */
const GRPC_NEAR_LIMIT_BYTES = 3 * 1024 * 1024;
const GRPC_RETRY_GIVE_UP_MS = 70_000;

function waitFor(c: PoisonCase, caseMs: number): number {
  if (c.kind !== 'signal' && c.kind !== 'update' && c.kind !== 'query') return caseMs;
  const bytes = c.args.reduce((sum, arg) => sum + arg.text.length, 0);
  return bytes >= GRPC_NEAR_LIMIT_BYTES ? Math.max(caseMs, GRPC_RETRY_GIVE_UP_MS) : caseMs;
}

const isClosed = (err: unknown): boolean => /already completed|not found/i.test((err as Error)?.message ?? '') || (err as Error)?.name === 'WorkflowNotFoundError';

/**
 * Delivers poison cases to sessions over the raw Temporal client, as a
 * client in another language or the `temporal` CLI would, and checks that
 * the session is still alive afterwards: it answers a normal message, its
 * stream holds only events `AgentEvent` accepts, and no run of it has a
 * `WorkflowTaskFailed` event.
 */
export class PoisonSession {
  readonly workflowId: string;
  private readonly closedChecked = new Set<string>();
  private readonly seenRuns = new Set<string>();
  private lastOffset = -1;
  private lastIgnored = 0;
  private pings = 0;

  constructor(
    private readonly target: PoisonTarget,
    readonly sessionId: string,
    readonly options: SessionOptionsInput,
    private readonly timeouts: { caseMs: number; turnMs: number },
  ) {
    this.workflowId = workflowIdFor(sessionId);
  }

  private get handle() {
    return this.target.client.workflow.getHandle(this.workflowId);
  }

  /** Sends a normal message and waits for its answer. */
  async ask(text: string): Promise<{ ok: boolean; why: string; turn?: TurnResult }> {
    let r = await callWithTimeout(this.target.client, () => this.target.agent.ask(this.options, { text }), this.timeouts.turnMs);
    if ('error' in r && (r.error as Error)?.name === 'SessionClosedError') {
      // A valid endSession among the cases: the run is archiving. Once it has closed, the message starts the session anew.
      await eventually(async () => (await this.handle.describe()).status.name !== 'RUNNING', 'the closing run to end', this.timeouts.turnMs).catch(() => undefined);
      r = await callWithTimeout(this.target.client, () => this.target.agent.ask(this.options, { text }), this.timeouts.turnMs);
    }
    if ('timedOut' in r) return { ok: false, why: `no answer to "${text.slice(0, 60)}" within ${this.timeouts.turnMs} ms` };
    if ('error' in r) return { ok: false, why: `"${text.slice(0, 60)}" failed: ${describeError(r.error)}` };
    this.seenRuns.add((await this.handle.describe()).runId);
    return { ok: true, why: '', turn: r.value.turn };
  }

  async start(): Promise<void> {
    const r = await this.ask('hello');
    if (!r.ok) throw new Error(`poison session ${this.sessionId} did not start: ${r.why}`);
  }

  /** Delivers one case (not `start`, which needs a session of its own). */
  async deliver(c: PoisonCase): Promise<CaseOutcome> {
    const first = await this.deliverOnce(c);
    // An endSession the fuzzer made valid ends the run; the next message starts it again.
    if (first.delivery !== Delivery.refused || !/already completed|not found/i.test(first.detail)) return first;
    await this.ask('hello again');
    return this.deliverOnce(c);
  }

  private async deliverOnce(c: PoisonCase): Promise<CaseOutcome> {
    const outcome = (delivery: Delivery, detail: string): CaseOutcome => ({ case: c, delivery, detail });
    const settle = async (work: () => Promise<unknown>, ms: number, onError: (err: unknown) => CaseOutcome): Promise<CaseOutcome> => {
      const r = await callWithTimeout(this.target.client, work, ms);
      if ('timedOut' in r) return outcome(Delivery.timedOut, `no answer within ${ms} ms`);
      if ('error' in r) return onError(r.error);
      return outcome(Delivery.accepted, '');
    };
    const refusedOr = (rejected: (err: unknown) => CaseOutcome) => (err: unknown) =>
      isRefusal(err) || isClosed(err) ? outcome(Delivery.refused, describeError(err)) : rejected(err);
    const caseMs = waitFor(c, this.timeouts.caseMs);
    switch (c.kind) {
      case 'signal':
        return settle(() => this.handle.signal(c.name, ...c.args.map(toPayload)), caseMs, (err) => outcome(Delivery.refused, describeError(err)));
      case 'update': {
        const updateId = `${c.id}-${randomUUID().slice(0, 8)}`;
        const rejected = refusedOr((err) => ({ ...outcome(Delivery.rejected, describeError(err)), updateId }));
        const started = await callWithTimeout(
          this.target.client,
          () => this.handle.startUpdate(c.name, { updateId, args: c.args.map(toPayload) as [RawValue], waitForStage: WorkflowUpdateStage.ACCEPTED }),
          caseMs,
        );
        if ('timedOut' in started) return { ...outcome(Delivery.timedOut, `no answer within ${caseMs} ms`), updateId };
        if ('error' in started) return rejected(started.error);
        // A rejection comes back with the start call, so its result is known at once; an accepted update may run on (a long poll, say).
        const settled = await callWithTimeout(this.target.client, () => started.value.result(), 100);
        if ('error' in settled) return rejected(settled.error);
        return { ...outcome(Delivery.accepted, ''), updateId };
      }
      case 'query':
        return settle(() => this.handle.query(c.name, ...c.args.map(toPayload)), caseMs, refusedOr((err) => outcome(Delivery.rejected, describeError(err))));
      case 'toolCalls': {
        this.target.model.register(c.id, c.calls);
        const r = await this.ask(toolTurnMessage(c.id));
        if (r.ok) return outcome(Delivery.accepted, `turn ${r.turn?.outcome}${r.turn?.error ? `: ${r.turn.error.slice(0, 200)}` : ''}`);
        return outcome(r.why.startsWith('no answer') ? Delivery.timedOut : Delivery.rejected, r.why);
      }
      case 'start':
        throw new Error('a start case needs its own session: use PoisonRunner.runStartCase');
    }
  }

  /** Is the session alive? See the class comment. */
  async check(): Promise<SessionCheck> {
    const check: SessionCheck = { answered: false, why: '', taskFailures: [], benignTaskFailures: 0, unparseable: [], foreignEvents: 0, toolResults: [], signalsIgnored: 0 };
    this.pings += 1;
    const message = `ping ${this.pings}`;
    const asked = await this.ask(message);
    check.answered = asked.ok && asked.turn?.text === pongFor(message);
    check.why = asked.ok && !check.answered ? `answered ${JSON.stringify(asked.turn)} to "${message}", expected "${pongFor(message)}"`.slice(0, 600) : asked.why;
    const failures = await taskFailuresOfAllRuns(this.target.client, this.workflowId, this.closedChecked, this.seenRuns);
    check.taskFailures = failures.filter((f) => !isBenignTaskFailure(f));
    check.benignTaskFailures = failures.length - check.taskFailures.length;
    if (!asked.ok) return check;
    const last = await callWithTimeout(this.target.client, () => this.target.agent.getSession(this.sessionId), this.timeouts.caseMs);
    if ('value' in last) {
      const view: SessionView = last.value;
      const ignored = view.counters.signalsIgnored ?? 0;
      check.signalsIgnored = ignored >= this.lastIgnored ? ignored - this.lastIgnored : ignored;
      this.lastIgnored = ignored;
    }
    const stream = await callWithTimeout(this.target.client, () => readWholeStream(this.target.client, this.workflowId), this.timeouts.turnMs);
    if ('timedOut' in stream || 'error' in stream) {
      check.unparseable.push({ offset: -1, why: `reading the stream failed: ${'error' in stream ? describeError(stream.error) : 'timed out'}` });
      return check;
    }
    check.unparseable = stream.value.unparseable;
    check.foreignEvents = stream.value.foreignTopics;
    for (const { offset, event } of stream.value.events) {
      if (offset <= this.lastOffset) continue;
      if (FOREIGN_MARKERS.some((m) => JSON.stringify(event).includes(m))) check.foreignEvents += 1;
      if (event.type === 'tool_call_result') check.toolResults.push({ ok: event.ok, ...(event.errorType ? { errorType: event.errorType } : {}) });
    }
    this.lastOffset = Math.max(this.lastOffset, ...stream.value.events.map((e) => e.offset));
    return check;
  }

  /** Stops a frozen session so its failing tasks do not keep the worker busy. */
  async terminate(reason: string): Promise<void> {
    await this.handle.terminate(reason).catch(() => undefined);
  }
}

/**
 * An update-with-start whose session options are the case's: it must be
 * refused with the options error, and the run it may leave behind must not
 * fail a workflow task.
 */
export async function runStartCase(target: PoisonTarget, c: Extract<PoisonCase, { kind: 'start' }>, sessionId: string, timeoutMs: number): Promise<{ outcome: CaseOutcome; taskFailures: TaskFailure[]; frozen: boolean }> {
  const workflowId = workflowIdFor(sessionId);
  const start = new WithStartWorkflowOperation(WORKFLOW_TYPE, {
    workflowId,
    taskQueue: target.taskQueue,
    args: [toPayload({ text: `{"options":${c.options.text}${c.carried ? `,"carried":${c.carried.text}` : ''}}` })],
    workflowIdConflictPolicy: 'USE_EXISTING',
  });
  const r = await callWithTimeout(target.client, () => target.client.workflow.executeUpdateWithStart('sendMessage', { args: [{ text: 'hello', principal: { tenant: 'acme', user: 'ana' } }], startWorkflowOperation: start }), timeoutMs);
  const outcome: CaseOutcome =
    'timedOut' in r
      ? { case: c, delivery: Delivery.timedOut, detail: `no answer within ${timeoutMs} ms` }
      : 'error' in r
        ? { case: c, delivery: isRefusal(r.error) ? Delivery.refused : Delivery.rejected, detail: describeError(r.error) }
        : { case: c, delivery: Delivery.accepted, detail: c.carried ? 'the options and carried state were valid after all' : 'the options were valid after all' };
  const taskFailures: TaskFailure[] = [];
  const run = await target.client.workflow.getHandle(workflowId).describe().catch(() => undefined);
  if (run) taskFailures.push(...(await taskFailuresOf(target.client, workflowId, run.runId)).filter((f) => !isBenignTaskFailure(f)));
  await target.client.workflow.getHandle(workflowId).terminate('poison suite: start case done').catch(() => undefined);
  return { outcome, taskFailures, frozen: outcome.delivery === Delivery.timedOut };
}
