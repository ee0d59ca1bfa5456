import {
  Client,
  WithStartWorkflowOperation,
  WorkflowFailedError,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  WorkflowUpdateStage,
  isGrpcServiceError,
  type WorkflowClient,
  type WorkflowExecutionDescription,
  type WorkflowResultType,
  type WorkflowStartOptions,
  type WorkflowUpdateHandle,
  type ClientInterceptors,
  type TLSConfig,
} from '@temporalio/client';
import { ApplicationFailure, TypedSearchAttributes, type DataConverter, type Workflow } from '@temporalio/common';
import { z } from 'zod';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { agentSession } from '../workflows/agent-session';
import type { deleteUserMemory, listUserMemories, readUserMemoryAudit } from '../workflows/maintenance';
import type { readSessionArchive } from '../workflows/archived-events';
import type { ReadUsageInput, readUsage } from '../workflows/usage';
import type { UsageSummary } from '../activities/usage/usage-store';
import type { expandPrompt, listPrompts } from '../workflows/mcp-prompts';
import type { ExpandPromptResult, ListPromptsResult } from '../activities/mcp/mcp-prompts';
import { AnswerInputInput } from '../workflows/input-request';
import { Principal, hasTenantRole } from '../workflows/principal';
import type {
  DeleteMemoryInput,
  DeleteMemoryResult,
  ListMemoriesInput,
  ListMemoriesResult,
  MemoryAuditInput,
  MemoryAuditResult,
} from '../activities/memory/memory-activity-types';
import { AgentEvent } from '../workflows/events';
import { SessionPendingApprovalsKey, SessionStatusKey, SessionTenantKey, SessionUserKey } from '../workflows/search-attributes';
import { FailureType } from '../workflows/failure-types';
import {
  EVENTS_TOPIC,
  WORKFLOW_TYPE,
  answerInputUpdate,
  decideToolCallUpdate,
  endSessionSignal,
  getSessionQuery,
  getTurnQuery,
  interruptSignal,
  readEventsQuery,
  sendMessageUpdate,
  waitForTurnUpdate,
  workflowIdFor,
} from '../workflows/messages';
import {
  DecideToolCallInput,
  EndSessionInput,
  InterruptInput,
  SendMessageInput,
  SessionOptions,
  UserNamespace,
  type SendMessageResult,
  type SessionOptionsInput,
  type SessionView,
  type TurnResult,
} from '../workflows/session-types';
import {
  AgentClientError,
  NotAuthorizedError,
  SessionBusyError,
  SessionClosedError,
  SessionNotFoundError,
  SessionValidationError,
  SessionVersionConflictError,
  TooManyWaitingError,
  TruncatedOffsetError,
  OffsetAheadError,
} from './errors';
import { CallDeadline, DEFAULT_CALL_TIMEOUT_MS, DEFAULT_CONNECT_TIMEOUT_MS, connectBounded } from './call-deadline';
import { callLinkedTo, polledRunOf, sessionStreamClient } from './event-stream-subscription';
import { AcceptedWithoutResult, acceptingRunClient } from './accepting-run';
import { QUERY_READS, isTooManyWaiting } from './queried-reads';
import { pause, stoppedBy } from './call-deadline';
import type { ReadEventsResult, TurnState } from '../workflows/session-queries';

/**
 * How long a helper workflow may run (see `runHelper`). Its work takes
 * seconds; the bound is past the retries of the activities inside (five
 * attempts of up to 5 minutes), so a slow MongoDB is waited out, not cut.
 */
export const HELPER_WORKFLOW_TIMEOUT = '30 minutes';

export interface AgentClientOptions {
  client: Client;
  taskQueue: string;
  /** Set false against a server without the session search attributes registered. */
  searchAttributes?: boolean;
  /**
   * Deadline of a call that should answer promptly (query, signal, message
   * accepted), and how often a long wait (a turn, the event stream) checks that
   * the server still answers. Default 10 s.
   */
  callTimeoutMs?: number;
  /**
   * A long wait (a turn, a memory read, the event stream) gives up with
   * TemporalCallTimeoutError once no worker has polled the task queue for
   * this long. Default 150 s: past a worker's long poll.
   */
  workerGoneAfterMs?: number;
  /**
   * Who this client acts for, sent with every call (see docs/security.md).
   * The backend asserts it after authenticating the person. Without it,
   * `send` and `ask` act as the session options' namespace and every other
   * call fails with NotAuthorizedError.
   */
  principal?: Principal;
}

/** One event with its position in the session's stream. */
export interface SessionEvent {
  offset: number;
  event: AgentEvent;
}

function describe(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.join('.') || '(input)'}: ${i.message}`).join('; ');
}

function parseOr<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const result = schema.safeParse(value);
  if (!result.success) throw new SessionValidationError(`Invalid ${what}: ${describe(result.error)}`, FailureType.SessionInputInvalid);
  return result.data;
}

/**
 * Session options as given. Limits over their maxima (LIMIT_MAXIMA) are not
 * refused here: a running session ignores the options a message carries,
 * and one started before the maxima may hold such limits; a new session
 * started with them is refused by the workflow, naming them.
 */
function sessionOptionsOf(options: SessionOptionsInput): SessionOptions {
  return parseOr(SessionOptions, options, 'session options');
}

/**
 * The Temporal update id of a message: its clientMessageId under its
 * sender. The server answers a second update with an id it has seen with the
 * first one's outcome, before any validator runs, so an id that another
 * caller could reuse (an Idempotency-Key they guessed) would hand them the
 * first caller's answer. The session itself refuses a sender who may not
 * send, and remembers ids per session (workflows/session-handlers.ts).
 */
function messageUpdateId(msg: { clientMessageId?: string; principal?: { tenant: string; user: string } }): string {
  const sender = msg.principal ? `${encodeURIComponent(msg.principal.tenant)}/${encodeURIComponent(msg.principal.user)}/` : '';
  // The server takes ids of at most 1,000 bytes: a tenant and user of 128 CJK characters each encode to 2,300. Such a
  // sender goes by a digest of itself ("#" never appears in an encoded one, so the two forms cannot meet).
  const short = sender.length <= MAX_SENDER_CHARS ? sender : `#${createHash('sha256').update(sender).digest('base64url')}/`;
  return `msg-${short}${msg.clientMessageId}`;
}

/** The longest encoded sender an update id carries as it is (ids stay under the server's 1,000 bytes with a 128-character message id of 3-byte characters). */
const MAX_SENDER_CHARS = 400;

const ExpandPromptArgs = z.object({
  server: z.string().min(1).max(128),
  name: z.string().min(1).max(256),
  arguments: z.record(z.string().max(256), z.string().max(20_000)),
});

/**
 * Sessions this process has seen running, per Temporal client, most recently
 * used last. A message to one of them goes as a plain update: the server's
 * update-with-start does more work for every message (about 2.3 ms more of
 * its CPU on the local dev server) only to find the workflow running. Bounded:
 * the oldest are forgotten first, and a forgotten session just gets the
 * update-with-start again.
 */
const KNOWN_RUNNING_LIMIT = 10_000;
const knownRunningByClient = new WeakMap<Client, Map<string, true>>();

function knownRunning(client: Client): Map<string, true> {
  let known = knownRunningByClient.get(client);
  if (!known) {
    known = new Map();
    knownRunningByClient.set(client, known);
  }
  return known;
}

function markRunning(known: Map<string, true>, workflowId: string): void {
  known.delete(workflowId);
  known.set(workflowId, true);
  if (known.size > KNOWN_RUNNING_LIMIT) known.delete(known.keys().next().value as string);
}

/**
 * The update was refused before any run accepted it, because none is open
 * (never started, or closed since): the message was not delivered. Asked of
 * the first call of a message only (after a call was cut short and sent
 * again, the message may have run in a run that has closed since, and the
 * caller is told so instead). Once a run has accepted it, the server
 * answers with the update's outcome (a run that closes before finishing it
 * fails the update), never "not found", and a first call that returns before
 * the result throws `AcceptedWithoutResult` instead; so an accepted message
 * is never sent again.
 */
function noRunningWorkflow(err: unknown): boolean {
  if (err instanceof WorkflowNotFoundError) return true;
  if (isGrpcServiceError(err) && err.code === 5) return true;
  return err instanceof Error && !(err instanceof WorkflowUpdateFailedError) && /workflow execution already completed/i.test(err.message);
}

/** A message id for a caller that gave none: 96 random bits, short, as the session keeps the last ids it saw. */
function newMessageId(): string {
  return randomBytes(12).toString('base64url');
}

/** The turn (and the version it was accepted at) in a `TurnCarriedOver` failure, else undefined. */
function carriedOver(err: unknown): { turnId: string; version?: number } | undefined {
  const cause = err instanceof WorkflowUpdateFailedError ? err.cause : undefined;
  if (!(cause instanceof ApplicationFailure) || cause.type !== FailureType.TurnCarriedOver) return undefined;
  const details = (cause.details?.[0] ?? {}) as { turnId?: unknown; version?: unknown };
  if (typeof details.turnId !== 'string') return undefined;
  return { turnId: details.turnId, ...(typeof details.version === 'number' ? { version: details.version } : {}) };
}

/** Turns Temporal's errors into the client's typed ones. */
/** For calls safe to make again (an update with its own id, a read): one cut short on the way is (CallDeadline). */
const RESEND = { resend: true } as const;
/** How far the server's clock may be behind this one, when a run's start time is compared with a call's. */
const CLOCK_SKEW_MS = 5_000;

function translate(err: unknown, sessionId: string): never {
  if (err instanceof WorkflowNotFoundError) throw new SessionNotFoundError(sessionId);
  if (isGrpcServiceError(err) && err.code === 5) throw new SessionNotFoundError(sessionId);
  const cause = err instanceof WorkflowUpdateFailedError ? err.cause : err;
  if (cause instanceof ApplicationFailure) {
    switch (cause.type) {
      case FailureType.SessionVersionConflict: {
        const details = (cause.details?.[0] ?? {}) as { currentVersion?: number; expectedVersion?: number };
        throw new SessionVersionConflictError(cause.message, details.currentVersion ?? -1, details.expectedVersion ?? -1);
      }
      case FailureType.SessionClosed:
        throw new SessionClosedError(cause.message);
      // The server's own failure of an update whose run closed (terminated, reset, failed) before it answered.
      case 'AcceptedUpdateCompletedWorkflow':
        throw new SessionClosedError(`Session ${sessionId}'s run ended before it answered (${cause.message}); read the session to see what it did, and send again if it did not.`);
      case FailureType.NotAuthorized:
        throw new NotAuthorizedError(cause.message);
      case FailureType.SessionBusy:
        throw new SessionBusyError(cause.message);
      case FailureType.TooManyWaiting:
        throw new TooManyWaitingError(cause.message);
      case FailureType.SessionInputInvalid:
      case FailureType.ConfirmationUnknown:
      case FailureType.InputUnknown:
        throw new SessionValidationError(cause.message, cause.type);
      default:
        break;
    }
  }
  if (err instanceof Error && /workflow execution already completed/i.test(err.message)) {
    throw new SessionClosedError(`Session ${sessionId} has ended on this run: ${err.message}`);
  }
  throw err;
}

/**
 * The typed client backend services use to drive sessions: send (starting the
 * session if needed), stream events, approve or deny risky calls, interrupt
 * and read the session.
 */
export class AgentClient {
  readonly client: Client;
  /** The task queue this client starts sessions on (its workers poll it). */
  readonly taskQueue: string;
  private readonly searchAttributes: boolean;
  private readonly deadline: CallDeadline;
  private readonly options: AgentClientOptions;
  /** Who this client acts for; see `AgentClientOptions.principal`. */
  readonly principal: Principal | undefined;
  /** Messages to running sessions in one call, their results read from the run that accepted them (client/accepting-run.ts). */
  private readonly messages: WorkflowClient | undefined;

  constructor(options: AgentClientOptions) {
    this.options = options;
    this.principal = options.principal === undefined ? undefined : parseOr(Principal, options.principal, 'principal');
    this.client = options.client;
    this.taskQueue = options.taskQueue;
    this.searchAttributes = options.searchAttributes ?? true;
    this.deadline = new CallDeadline(options.client, options.taskQueue, options.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS, options.workerGoneAfterMs);
    this.messages = acceptingRunClient(options.client);
  }

  /** Connects within `connectTimeoutMs` (default 5 s), else throws a TemporalUnreachableError naming the address. */
  static async connect(options: {
    address: string;
    namespace?: string;
    taskQueue: string;
    connectTimeoutMs?: number;
    callTimeoutMs?: number;
    /** Who the client acts for, sent with every call (see `AgentClientOptions.principal`). */
    principal?: Principal;
    /**
     * Payload encryption, the same keys the workers use (`dataConverterFor(config.encryption)`
     * from codec/). Without it, an encrypting worker's payloads are unreadable here.
     */
    dataConverter?: DataConverter;
    /**
     * TLS to the server: `true` for the system's CAs, or the server name, CA
     * and (mTLS) client certificate and key. Off by default, as the local dev
     * server wants. `temporalTransportOptions(config.temporal)` from workers/
     * builds this and `apiKey` from the same settings the workers use.
     */
    tls?: TLSConfig | boolean;
    /** An API key (Temporal Cloud); implies TLS. Never appears in errors. */
    apiKey?: string;
    /** Client interceptors, e.g. `clientTracingInterceptors()` from workers/tracing.ts for OpenTelemetry. */
    interceptors?: ClientInterceptors;
  }): Promise<AgentClient> {
    const connection = await connectBounded(options.address, options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS, { tls: options.tls, apiKey: options.apiKey });
    return new AgentClient({
      client: new Client({ connection, namespace: options.namespace ?? 'default', dataConverter: options.dataConverter, ...(options.interceptors ? { interceptors: options.interceptors } : {}) }),
      taskQueue: options.taskQueue,
      callTimeoutMs: options.callTimeoutMs,
      principal: options.principal,
    });
  }

  /** The same client (connection, task queue) acting for another principal. */
  as(principal: Principal): AgentClient {
    return new AgentClient({ ...this.options, principal });
  }

  /** The configured principal, or a clear failure for a call that needs one. */
  private requirePrincipal(what: string): Principal {
    if (this.principal) return this.principal;
    throw new NotAuthorizedError(`${what} needs a principal: create the client with { principal: { tenant, user } } (the person your backend authenticated).`);
  }

  private handle(sessionId: string) {
    return this.client.workflow.getHandle<typeof agentSession>(workflowIdFor(sessionId));
  }

  /**
   * Sends a message, starting the session with `options` when it does not run.
   * Resolves once the turn is accepted, with its id and the session's new version.
   */
  async send(options: SessionOptionsInput, message: z.input<typeof SendMessageInput>): Promise<SendMessageResult> {
    return this.sendWithStart(options, message, 'prompt');
  }

  private async sendWithStart(
    options: SessionOptionsInput,
    message: z.input<typeof SendMessageInput>,
    wait: 'prompt' | 'watched',
    signal?: AbortSignal,
  ): Promise<SendMessageResult> {
    const session = sessionOptionsOf(options);
    // Without a configured principal the client acts as the session's own user.
    const principal = this.principal ?? { tenant: session.namespace.tenant, user: session.namespace.user };
    // Every message carries an id: a call the connection sends again after its transport failed (the one call
    // is held for the whole turn) may reach a run that continued as new since, which knows the message only by
    // that id (the session remembers ids across runs) and then answers it without running it again.
    const msg = parseOr(SendMessageInput, { principal, ...message, clientMessageId: message.clientMessageId ?? newMessageId() }, 'message');
    const workflowId = workflowIdFor(session.sessionId);
    const updateId = msg.clientMessageId ? { updateId: messageUpdateId(msg) } : {};
    const known = knownRunning(this.client);
    // The message carries its own update id, so a call cut short on the way is sent again as it was. Once one
    // was, a run that has closed since may have run the message: it is never started again in a new one.
    const firstSentAt = Date.now();
    let resent = false;
    const resend = { resend: true, onResend: () => (resent = true) };
    const call = <T>(what: string, fn: () => Promise<T>): Promise<T> =>
      wait === 'prompt' ? this.deadline.prompt(what, fn, resend) : this.deadline.watched(what, fn, signal, resend);
    const mayHaveRun = () =>
      new SessionClosedError(
        `Session ${session.sessionId}'s run closed while message ${msg.clientMessageId} was being sent again after a call was cut short: it may have run. Read the session before sending it again.`,
      );
    // Sent again after a cut: a run that has closed since the first call may have run the message (a run
    // closed before it never saw it, and a message to it starts the session again, as for one never seen).
    const closedSinceFirstCall = async (): Promise<boolean> => {
      const latest = await this.describeRun(session.sessionId);
      return latest !== undefined && latest.closeTime !== undefined && latest.closeTime.getTime() >= firstSentAt - CLOCK_SKEW_MS;
    };
    if (known.has(workflowId)) {
      const what = `sendMessage to session ${session.sessionId}`;
      let accepted: WorkflowUpdateHandle<SendMessageResult> | undefined;
      try {
        const messages = this.messages;
        if (messages) {
          // One call, held until the update completes (`ask`: the turn's end; `send`: its acceptance).
          const result = await call(what, () => messages.getHandle(workflowId).executeUpdate(sendMessageUpdate, { args: [msg], ...updateId }));
          markRunning(known, workflowId);
          return result;
        }
        // Until accepted, then the result: its wait names the run that accepted it. (A bare executeUpdate
        // would wait on whichever run is current, and a session that continued as new, or ended and
        // started again meanwhile, answers "not found" for a message it did run.)
        accepted = await call(what, () =>
          this.handle(session.sessionId).startUpdate(sendMessageUpdate, { args: [msg], waitForStage: WorkflowUpdateStage.ACCEPTED, ...updateId }),
        );
      } catch (err) {
        if (err instanceof AcceptedWithoutResult) {
          // Accepted, and the server answered before the result (past its long poll): read it from that run.
          accepted = this.handle(session.sessionId).getUpdateHandle<SendMessageResult>(err.updateId, { workflowRunId: err.runId });
        } else {
          // Refused before delivery because no run is open: start one below, as for a session never seen.
          if (!noRunningWorkflow(err)) translate(err, session.sessionId);
          if (resent && (await closedSinceFirstCall())) throw mayHaveRun();
          known.delete(workflowId);
        }
      }
      if (accepted) {
        const update = accepted;
        try {
          const result = await call(what, () => update.result());
          markRunning(known, workflowId);
          return result;
        } catch (err) {
          translate(err, session.sessionId);
        }
      }
    }
    // A new operation per call: the SDK runs each one once.
    const start = () =>
      new WithStartWorkflowOperation<typeof agentSession>(WORKFLOW_TYPE, {
        workflowId,
        taskQueue: this.taskQueue,
        args: [{ options: session }],
        workflowIdConflictPolicy: 'USE_EXISTING',
        memo: { user: session.namespace.user, tenant: session.namespace.tenant, channel: session.channel },
        ...(this.searchAttributes
          ? {
              typedSearchAttributes: new TypedSearchAttributes([
                { key: SessionUserKey, value: session.namespace.user },
                { key: SessionTenantKey, value: session.namespace.tenant },
                { key: SessionStatusKey, value: 'created' },
                { key: SessionPendingApprovalsKey, value: 0 },
              ]),
            }
          : {}),
      });
    try {
      const result = await call(`sendMessage to session ${session.sessionId}`, async () => {
        if (resent && (await closedSinceFirstCall())) throw mayHaveRun();
        return this.client.workflow.executeUpdateWithStart(sendMessageUpdate, { args: [msg], startWorkflowOperation: start(), ...updateId });
      });
      markRunning(known, workflowId);
      return result;
    } catch (err) {
      translate(err, session.sessionId);
    }
  }

  /** Sends a message to a running session; never starts one. */
  async sendTo(sessionId: string, message: z.input<typeof SendMessageInput>): Promise<SendMessageResult> {
    const msg = parseOr(
      SendMessageInput,
      { principal: message.principal ?? this.requirePrincipal('sendTo'), ...message, clientMessageId: message.clientMessageId ?? newMessageId() },
      'message',
    );
    const what = `sendMessage to session ${sessionId}`;
    const options = { args: [msg] as [typeof msg], updateId: messageUpdateId(msg) };
    try {
      // One call; past the server's long poll, the result comes from the run that accepted it (client/accepting-run.ts).
      return await this.deadline.prompt(what, () => (this.messages ?? this.client.workflow).getHandle(workflowIdFor(sessionId)).executeUpdate(sendMessageUpdate, options), RESEND);
    } catch (err) {
      if (!(err instanceof AcceptedWithoutResult)) translate(err, sessionId);
      const accepted = this.handle(sessionId).getUpdateHandle<SendMessageResult>(err.updateId, { workflowRunId: err.runId });
      try {
        return await this.deadline.prompt(what, () => accepted.result(), RESEND);
      } catch (later) {
        translate(later, sessionId);
      }
    }
  }

  /**
   * Sends a message (starting the session with `options` when it does not
   * run) and resolves when its turn has finished, with the turn's result:
   * one update round trip, where `send` then `waitForTurn` takes two.
   * `signal` stops the wait (the message, once accepted, still runs): the
   * HTTP API passes its request's, so a caller who hangs up leaves nothing
   * waiting on the server.
   */
  async ask(options: SessionOptionsInput, message: z.input<typeof SendMessageInput>, opts: { signal?: AbortSignal } = {}): Promise<SendMessageResult & { turn: TurnResult }> {
    const { signal } = opts;
    const session = sessionOptionsOf(options);
    const sessionId = session.sessionId;
    const principal = this.principal ?? { tenant: session.namespace.tenant, user: session.namespace.user };
    let accepted: SendMessageResult;
    // One id for both tries below: the second is then the same message, never a second turn.
    const clientMessageId = message.clientMessageId ?? newMessageId();
    try {
      // The turn may run for minutes: wait as long as the server answers, not against a fixed deadline.
      accepted = await this.sendWithStart(options, { ...message, clientMessageId, waitForTurn: true }, 'watched', signal);
    } catch (err) {
      if (err instanceof TooManyWaitingError) {
        // As many calls wait for turns as the session allows, and this message was not taken: send it without
        // waiting, then wait for its turn (by query while the session still refuses another wait).
        const sent = await this.sendWithStart(options, { ...message, clientMessageId, waitForTurn: false }, 'prompt');
        return { ...sent, turn: await this.waitFor(sessionId, sent.turnId, principal, signal) };
      }
      const carried = carriedOver(err);
      if (carried?.version === undefined) throw err;
      // The session continued as new before the turn ran: the turn went with it, so wait for it there.
      return { turnId: carried.turnId, version: carried.version, turn: await this.waitFor(sessionId, carried.turnId, principal, signal) };
    }
    // The same message id sent before without waiting (the server answers a repeated id with the first outcome,
    // which has no turn), or a worker older than this client: wait for the turn on its own.
    if (!accepted.turn) return { ...accepted, turn: await this.waitFor(sessionId, accepted.turnId, principal, signal) };
    return accepted as SendMessageResult & { turn: TurnResult };
  }

  /** Waits for a turn to finish and returns its result, across continue-as-new; `signal` stops the wait. */
  async waitForTurn(sessionId: string, turnId: string, opts: { signal?: AbortSignal } = {}): Promise<TurnResult> {
    return this.waitFor(sessionId, turnId, this.requirePrincipal('waitForTurn'), opts.signal);
  }

  private async waitFor(sessionId: string, turnId: string, principal: Principal, signal?: AbortSignal): Promise<TurnResult> {
    for (;;) {
      try {
        // A wait changes nothing: one cut short is made again, under the same update id, so it joins the wait it
        // started (which holds one of the session's waiting slots until the turn ends) instead of adding one.
        const updateId = `wait-${turnId}-${randomUUID()}`;
        return await this.deadline.watched(
          `waitForTurn ${turnId} of session ${sessionId}`,
          () => this.handle(sessionId).executeUpdate(waitForTurnUpdate, { args: [{ turnId, principal }], updateId }),
          signal,
          RESEND,
        );
      } catch (err) {
        if (isTooManyWaiting(err)) {
          // As many calls wait for turns as the session allows: ask by query, then try waiting again.
          const result = await this.turnByQuery(sessionId, turnId, principal, signal);
          if (result) return result;
          continue;
        }
        if (signal?.aborted) throw err;
        if (carriedOver(err) === undefined) translate(err, sessionId);
      }
    }
  }

  /**
   * A turn's result by the `getTurn` query, asked again after a pause that
   * grows to QUERY_READS.maxDelayMs; undefined once QUERY_READS.waitAgainAfterMs
   * has passed with the turn still to finish. The query takes no principal:
   * read access is checked first, as getSession's.
   */
  private async turnByQuery(sessionId: string, turnId: string, principal: Principal, signal?: AbortSignal): Promise<TurnResult | undefined> {
    const handle = this.handle(sessionId);
    // The session's owner, or an approver or admin of its tenant, as the refused wait would have checked.
    await this.readable(sessionId, principal);
    const waitAgainAt = Date.now() + QUERY_READS.waitAgainAfterMs;
    let delay = QUERY_READS.firstDelayMs;
    for (;;) {
      let state: TurnState;
      try {
        state = await this.deadline.prompt(`getTurn ${turnId} of session ${sessionId}`, () => handle.query(getTurnQuery, { turnId }), RESEND);
      } catch (err) {
        translate(err, sessionId);
      }
      if (state.state === 'finished' && state.result) return state.result;
      if (state.state === 'unknown') {
        throw new SessionValidationError(
          `Turn ${turnId} is unknown to session ${sessionId}, or its result is no longer kept; read its answer from the session's events.`,
          FailureType.SessionInputInvalid,
        );
      }
      if (Date.now() >= waitAgainAt) return undefined;
      await pause(delay, signal);
      if (signal?.aborted) throw stoppedBy(signal, `waitForTurn ${turnId} of session ${sessionId}`);
      delay = Math.min(delay * 2, QUERY_READS.maxDelayMs);
    }
  }

  /**
   * The session's state. Queries take no principal (a query's arguments are
   * not part of the contract every SDK and the CLI can send), so the check is
   * here: a session whose owner is not this client's principal, nor of a
   * tenant it approves for, is refused with NotAuthorizedError. Anyone with
   * raw Temporal access can still query: that access is trusted.
   */
  async getSession(sessionId: string): Promise<SessionView> {
    return this.readable(sessionId, this.requirePrincipal('getSession'));
  }

  /** The session's view, once `principal` is found to be its owner, or an approver or admin of its tenant. */
  private async readable(sessionId: string, principal: Principal): Promise<SessionView> {
    let view: SessionView;
    try {
      view = await this.deadline.prompt(`getSession ${sessionId}`, () => this.handle(sessionId).query(getSessionQuery), RESEND);
    } catch (err) {
      translate(err, sessionId);
    }
    // Sessions of workers from before the owner was shown: their namespace is the owner.
    const owner = view.owner ?? view.namespace;
    const mine = owner.tenant === principal.tenant && owner.user === principal.user;
    if (!mine && !hasTenantRole(owner.tenant, principal, 'approver')) {
      throw new NotAuthorizedError(`Not authorized: ${principal.tenant}/${principal.user} may not read session ${sessionId}; its owner, or an approver or admin of the owner's tenant, may.`);
    }
    return view;
  }

  /**
   * Approves a held tool call. With `confirmationId` (from the
   * `confirmation_required` event or `getSession().pendingConfirmations`)
   * the approval is taken only for that request: models reuse call ids, and
   * an approval by id alone may land on a later call under the same id.
   */
  async approve(sessionId: string, toolCallId: string, reason?: string, options: { confirmationId?: string } = {}): Promise<void> {
    await this.decide(sessionId, { toolCallId, approved: true, reason, ...options });
  }

  /** Denies a held tool call; `confirmationId` as for `approve`. */
  async deny(sessionId: string, toolCallId: string, reason?: string, options: { confirmationId?: string } = {}): Promise<void> {
    await this.decide(sessionId, { toolCallId, approved: false, reason, ...options });
  }

  private async decide(sessionId: string, input: DecideToolCallInput): Promise<void> {
    const decision = parseOr(DecideToolCallInput, { ...input, principal: input.principal ?? this.requirePrincipal('decideToolCall') }, 'decision');
    try {
      await this.deadline.prompt(`decideToolCall in session ${sessionId}`, () => this.handle(sessionId).executeUpdate(decideToolCallUpdate, { args: [decision] }));
    } catch (err) {
      translate(err, sessionId);
    }
  }

  /**
   * Answers a question an MCP server asked during a tool call (`input_required`,
   * or `getSession().pendingInputs`): `accept` with content that fits the
   * server's schema, `decline` or `cancel`. A bad answer is refused with every
   * problem named, and nothing is written.
   */
  async answerInput(sessionId: string, answer: z.input<typeof AnswerInputInput>): Promise<void> {
    const input = parseOr(AnswerInputInput, { ...answer, principal: answer.principal ?? this.requirePrincipal('answerInput') }, 'answer');
    try {
      await this.deadline.prompt(`answerInput in session ${sessionId}`, () => this.handle(sessionId).executeUpdate(answerInputUpdate, { args: [input] }));
    } catch (err) {
      translate(err, sessionId);
    }
  }

  /**
   * Stops the running turn. A signal: a principal that may not interrupt is ignored by the session (counted in
   * `signalsUnauthorized`), not refused. With `turnId`, only that turn is stopped: a Stop that arrives after it ended
   * leaves the next turn alone. Workers from before this option ignore a signal that names a turn (a field they do not
   * know): upgrade the workers before the clients that send it (docs/robustness.md).
   */
  async interrupt(sessionId: string, reason?: string, opts: { turnId?: string } = {}): Promise<void> {
    const principal = this.requirePrincipal('interrupt');
    // A signal the session cannot read is ignored there, where nobody hears: refuse it here, named.
    const input = parseOr(InterruptInput, { reason, principal, ...(opts.turnId !== undefined ? { turnId: opts.turnId } : {}) }, 'interrupt');
    try {
      await this.deadline.prompt(`interrupt of session ${sessionId}`, () => this.handle(sessionId).signal(interruptSignal, input));
    } catch (err) {
      translate(err, sessionId);
    }
  }

  /** Asks the session to archive itself once the running turn is done. */
  async end(sessionId: string, reason?: string): Promise<void> {
    const principal = this.requirePrincipal('end');
    const input = parseOr(EndSessionInput, { reason, principal }, 'end request');
    try {
      await this.deadline.prompt(`end of session ${sessionId}`, () => this.handle(sessionId).signal(endSessionSignal, input));
    } catch (err) {
      translate(err, sessionId);
    }
  }

  /**
   * The session's events from `fromOffset` on, in order, across
   * continue-as-new. Ends when the session's workflow ends (or when the
   * caller breaks out of the loop). Only the session's owner, or an approver
   * or admin of its tenant, may read them (NotAuthorizedError otherwise).
   * Asking for an offset the session no longer keeps (or falling that far
   * behind) throws TruncatedOffsetError with the earliest offset it keeps;
   * `fromOffset: 0` means "from the earliest kept".
   */
  async *events(sessionId: string, options: { fromOffset?: number; signal?: AbortSignal } = {}): AsyncGenerator<SessionEvent> {
    const fromOffset = options.fromOffset ?? 0;
    if (!(await this.isRunning(sessionId))) {
      // A closed run's stream cannot be polled: its events come from the archive (read access checked there).
      yield* this.archivedEvents(sessionId, fromOffset, { signal: options.signal });
      return;
    }
    // Read access is checked like getSession's (the owner, or an approver or admin of its tenant) before the first read.
    await this.getSession(sessionId);
    // An offset no event has reached would be waited for silently (for ever, on a session that started afresh).
    if (fromOffset > 0) {
      const next = await this.streamEnd(sessionId);
      if (fromOffset > next) throw new OffsetAheadError(sessionId, fromOffset, next);
    }
    let expected = fromOffset;
    let yielded = false;
    let archiveChecked = false;
    // Stops the pending read (a long poll, a query, a pause between queries) when the caller gives up or the reader ends.
    const reads = new AbortController();
    // A generator's return() waits for its pending next(), which may be a long poll: `signal` stops the reader at once.
    const stop = () => reads.abort();
    options.signal?.addEventListener('abort', stop, { once: true });
    if (options.signal?.aborted) return;
    try {
      for await (const item of this.rawEvents(sessionId, () => expected, reads.signal)) {
        // Offsets are contiguous; a jump means the events in between are not on this run's stream (the
        // stream library would silently skip ahead): a restored run's earlier events are in the archive,
        // otherwise they are gone. Offset 0 asks for "whatever is kept", so the first item may be later.
        if (item.offset > expected && !archiveChecked) {
          archiveChecked = true;
          // Read from "whatever is kept" (offset 0), the archive is read only when it joins the run's first kept
          // event: a restored run that continued as new since keeps its latest events only, and the archive's
          // followed by a hole would end such a reader (every new reader of the API) with TruncatedOffsetError.
          const whateverIsKept = expected === 0 && !yielded;
          for await (const e of this.archivedEvents(sessionId, expected, { before: item.offset, signal: options.signal, quiet: true, ...(whateverIsKept ? { reaching: item.offset } : {}) })) {
            yield e;
            expected = e.offset + 1;
            yielded = true;
          }
          // Stopped while the gap was read: the reader ends, and reports no gap it did not finish reading.
          if (reads.signal.aborted) return;
        }
        // Read by query after a poll, an item may come again: what was yielded is not yielded twice.
        if (item.offset < expected) continue;
        if (item.offset > expected && (expected > 0 || yielded)) throw new TruncatedOffsetError(sessionId, expected, item.offset);
        expected = item.offset + 1;
        yielded = true;
        const parsed = AgentEvent.safeParse(item.data);
        if (!parsed.success) {
          throw new AgentClientError(`Session ${sessionId} streamed an event that does not match AgentEvent at offset ${item.offset}: ${describe(parsed.error)}`);
        }
        yield { offset: item.offset, event: parsed.data };
      }
      // The run closed (archived): what it published after this reader's last read is in the archive.
      if (!reads.signal.aborted) yield* this.archivedEvents(sessionId, expected, { signal: options.signal, quiet: true });
    } finally {
      options.signal?.removeEventListener('abort', stop);
      // A poll may still be waiting on the server (a long poll, or a retry): cancel it, so nothing of this
      // reader outlives it, not even a retry on a connection the caller closes next.
      reads.abort();
    }
  }

  /**
   * The session's stream items from `from()` on: by long poll, and by the
   * `readEvents` query while the session refuses another waiting poll
   * (workflows/waiting-budget.ts), trying the poll again now and then. Ends
   * when the session's last run has closed, or at once when `stop` aborts.
   */
  private async *rawEvents(sessionId: string, from: () => number, stop: AbortSignal): AsyncGenerator<{ offset: number; data: unknown }> {
    let dropped = 0;
    // The run the reader's polls last reached, kept across subscriptions (a new one has reached none yet).
    const reached: { run?: string } = {};
    for (;;) {
      const before = from();
      const polled = yield* this.polledEvents(sessionId, before, stop, reached);
      if (polled === 'dropped') {
        // Polled again after a pause that grows while the drops bring nothing, so a call failing at once never spins.
        dropped = from() > before ? 1 : dropped + 1;
        await pause(Math.min(QUERY_READS.maxDelayMs, QUERY_READS.firstDelayMs * 2 ** (dropped - 1)), stop);
        continue;
      }
      if (polled !== 'crowded') return;
      const queried = yield* this.queriedEvents(sessionId, from(), stop);
      if (queried !== 'poll again') return;
    }
  }

  private async *polledEvents(
    sessionId: string,
    fromOffset: number,
    stop: AbortSignal,
    reached: { run?: string },
  ): AsyncGenerator<{ offset: number; data: unknown }, 'ended' | 'crowded' | 'stopped' | 'dropped'> {
    const stream = sessionStreamClient(this.client, workflowIdFor(sessionId));
    // The default cooldown between polls batches events (~100 ms latency) and keeps each poll, an update in history, from costing one event per delta.
    const items = stream.topic<unknown>(EVENTS_TOPIC).subscribe(fromOffset)[Symbol.asyncIterator]();
    let abandoned = false;
    try {
      for (;;) {
        if (stop.aborted) return 'stopped';
        // An idle session may stay quiet for long; the reader waits as long as the server answers.
        let next: IteratorResult<{ offset: number; data: unknown }>;
        const poll = callLinkedTo(stop);
        try {
          next = await this.deadline.whileAlive(`reading events of session ${sessionId}`, this.client.withAbortSignal(poll.signal, () => items.next()));
        } catch (err) {
          abandoned = true;
          // Given up (a dead server, no worker): the poll must not outlive the reader, nor a retry of it.
          poll.abort();
          // Stopped by the caller's signal: the reader simply ends.
          if (stop.aborted) return 'stopped';
          // As many readers wait as the session allows: read by query (the stream's iterator has ended with the error).
          if (isTooManyWaiting(err)) return 'crowded';
          throw err;
        } finally {
          poll.release();
        }
        reached.run = polledRunOf(stream) ?? reached.run;
        if (next.done) {
          if (stop.aborted) return 'stopped';
          // The stream library (1.23.0) also ends, as if the stream were over, when one poll's call times out or is
          // cancelled (DEADLINE_EXCEEDED or CANCELLED, as under load or on a reset connection) and the run it polled
          // has not continued as new (or describing it failed). A reader that ended there missed every later event.
          return await this.streamEnded(sessionId, reached.run, stop);
        }
        yield next.value;
      }
    } finally {
      const closing = items.return?.(undefined)?.catch(() => undefined);
      // A generator's return waits for its pending next(); after giving up on a dead server, do not wait for it.
      if (!abandoned) await closing;
    }
  }

  /**
   * Stream items read by the `readEvents` query, which holds nothing on the
   * server, asked again after a pause that grows while nothing is new. After
   * QUERY_READS.waitAgainAfterMs (or when a query fails) the reader polls
   * again; a run that has closed ends it.
   */
  private async *queriedEvents(sessionId: string, fromOffset: number, stop: AbortSignal): AsyncGenerator<{ offset: number; data: unknown }, 'ended' | 'poll again' | 'stopped'> {
    const handle = this.handle(sessionId);
    const pollAgainAt = Date.now() + QUERY_READS.waitAgainAfterMs;
    let offset = fromOffset;
    let delay = QUERY_READS.firstDelayMs;
    let quietRounds = 0;
    for (;;) {
      if (stop.aborted) return 'stopped';
      let page: ReadEventsResult;
      const query = callLinkedTo(stop);
      try {
        page = await this.deadline.prompt(`reading events of session ${sessionId}`, () =>
          this.client.withAbortSignal(query.signal, () => handle.query(readEventsQuery, { fromOffset: offset })),
        );
      } catch {
        if (stop.aborted) return 'stopped';
        // No answer (no worker, say): the poll waits for one as long as the server answers, and says why it gave up.
        await pause(QUERY_READS.maxDelayMs, stop);
        return 'poll again';
      } finally {
        query.release();
      }
      for (const item of page.items) yield { offset: item.offset, data: item.event };
      offset = Math.max(offset, page.nextOffset);
      if (page.items.length > 0) {
        delay = QUERY_READS.firstDelayMs;
        quietRounds = 0;
        continue;
      }
      quietRounds += 1;
      // A closed run still answers queries with what it held: once read, the archive has the rest.
      if ((page.closing || quietRounds % 10 === 0) && !(await this.isRunning(sessionId))) {
        // What the run published after the read above went with it: read its last events before the archive.
        const last = await this.deadline.prompt(`reading events of session ${sessionId}`, () => handle.query(readEventsQuery, { fromOffset: offset })).catch(() => undefined);
        for (const item of last?.items ?? []) yield { offset: item.offset, data: item.event };
        return 'ended';
      }
      if (Date.now() >= pollAgainAt && !page.closing) return 'poll again';
      await pause(delay, stop);
      delay = Math.min(delay * 2, QUERY_READS.maxDelayMs);
    }
  }

  /**
   * After the stream library ended a subscription: 'ended' when the run the
   * reader last reached has closed for good, 'dropped' (poll again) while it
   * is open or its chain goes on in a later run. A run of another chain (the
   * session ended and was started again since) is not followed. When the
   * runs cannot be described, the reader polls again: a poll of a closed run
   * ends or fails by itself.
   */
  private async streamEnded(sessionId: string, runId: string | undefined, stop: AbortSignal): Promise<'ended' | 'dropped' | 'stopped'> {
    const describe = async (id?: string) => {
      const info = await this.describeRun(sessionId, id);
      return info && { status: info.status.name, chain: info.raw.workflowExecutionInfo?.firstRunId ?? undefined };
    };
    const verdict = (async (): Promise<'ended' | 'dropped'> => {
      const polled = runId ? await describe(runId) : undefined;
      if (polled?.status === 'RUNNING') return 'dropped';
      if (polled && polled.status !== 'CONTINUED_AS_NEW') return 'ended';
      const latest = await describe();
      return latest?.status === 'RUNNING' && (polled === undefined || latest.chain === polled.chain) ? 'dropped' : 'ended';
    })().catch(() => 'dropped' as const);
    // The caller's stop ends the reader at once, even mid-describe.
    let onStop = (): void => undefined;
    const stopped = new Promise<'stopped'>((resolve) => {
      onStop = () => resolve('stopped');
      if (stop.aborted) onStop();
      else stop.addEventListener('abort', onStop, { once: true });
    });
    try {
      return await Promise.race([verdict, stopped]);
    } finally {
      stop.removeEventListener('abort', onStop);
    }
  }

  /**
   * The offset the session's next event will have (the end of its stream),
   * while its latest run is open; undefined once it has closed (its events
   * are then read from the archive). Only its owner, or an approver or
   * admin of its tenant, may ask. A reader resuming from past it would wait
   * for an offset the run has not reached: `events()` refuses that with
   * OffsetAheadError, and so does the API's event stream.
   */
  async nextEventOffset(sessionId: string): Promise<number | undefined> {
    await this.readable(sessionId, this.requirePrincipal('nextEventOffset'));
    if (!(await this.isRunning(sessionId))) return undefined;
    return this.streamEnd(sessionId);
  }

  private async streamEnd(sessionId: string): Promise<number> {
    try {
      return await this.deadline.prompt(`reading the event offset of session ${sessionId}`, () => sessionStreamClient(this.client, workflowIdFor(sessionId)).getOffset(), RESEND);
    } catch (err) {
      translate(err, sessionId);
    }
  }

  /** Whether the session's latest run is open (false when it has closed, or never existed). */
  private async isRunning(sessionId: string): Promise<boolean> {
    return (await this.describeRun(sessionId))?.status.name === 'RUNNING';
  }

  /** The session's run `runId` (its latest without one) as the server describes it; undefined when there is none. */
  private async describeRun(sessionId: string, runId?: string): Promise<WorkflowExecutionDescription | undefined> {
    const handle = runId ? this.client.workflow.getHandle(workflowIdFor(sessionId), runId) : this.handle(sessionId);
    try {
      return await this.deadline.prompt(`describe session ${sessionId}`, () => handle.describe(), RESEND);
    } catch (err) {
      if (err instanceof WorkflowNotFoundError || (isGrpcServiceError(err) && err.code === 5)) return undefined;
      throw err;
    }
  }

  /**
   * Events of the session kept in its archive, from `fromOffset` (up to
   * `before`, exclusive). `quiet`: used to fill a gap or a tail, so no archive
   * (or one that does not reach back) yields nothing instead of throwing.
   */
  private async *archivedEvents(
    sessionId: string,
    fromOffset: number,
    options: { before?: number; signal?: AbortSignal | undefined; quiet?: boolean; reaching?: number } = {},
  ): AsyncGenerator<SessionEvent> {
    const { before, signal, quiet = false, reaching } = options;
    const principal = this.requirePrincipal('events');
    let next = fromOffset;
    let first = true;
    for (;;) {
      if (signal?.aborted) return;
      let page: Awaited<ReturnType<typeof readSessionArchive>>;
      try {
        page = await this.runHelper<typeof readSessionArchive>(
          'readSessionArchive',
          `session-archive-read-${sessionId}-${randomUUID()}`,
          [{ sessionId, fromOffset: next, limit: 1_000, principal }],
          `reading the archived events of session ${sessionId}`,
          signal,
        );
      } catch (err) {
        // Stopped by the caller's signal: the reader simply ends.
        if (signal?.aborted) return;
        const cause = err instanceof WorkflowFailedError ? err.cause : undefined;
        if (cause instanceof ApplicationFailure && cause.type === FailureType.NotAuthorized) throw new NotAuthorizedError(cause.message);
        throw err;
      }
      if (!page) {
        if (quiet) return;
        throw new SessionNotFoundError(sessionId);
      }
      // `reaching`: nothing is read unless the archive goes on up to that offset.
      if (first && reaching !== undefined && page.nextOffset < reaching) return;
      if (first && fromOffset > 0 && fromOffset < page.earliestOffset) {
        if (quiet) return;
        throw new TruncatedOffsetError(sessionId, fromOffset, page.earliestOffset);
      }
      first = false;
      for (const item of page.items) {
        if (before !== undefined && item.offset >= before) return;
        const parsed = AgentEvent.safeParse(JSON.parse(item.json));
        if (!parsed.success) {
          throw new AgentClientError(`Session ${sessionId}'s archive holds an event that does not match AgentEvent at offset ${item.offset}: ${describe(parsed.error)}`);
        }
        yield { offset: item.offset, event: parsed.data };
        next = item.offset + 1;
      }
      if (page.items.length < 1_000 || next >= page.nextOffset) return;
    }
  }

  /**
   * Tokens and their cost (MODEL_PRICES on the workers) by day and model: a
   * user's own, one of their sessions', or, for an admin of the tenant, any
   * user's or the tenant's total. `days` counts whole UTC days, today included.
   */
  async getUsage(query: Omit<ReadUsageInput, 'principal'>): Promise<UsageSummary> {
    const principal = this.requirePrincipal('getUsage');
    try {
      return await this.runHelper<typeof readUsage>('readUsage', `usage-read-${query.tenant}-${randomUUID()}`, [{ ...query, principal }], `usage of ${query.tenant}${query.user ? `/${query.user}` : ''}`);
    } catch (err) {
      const cause = err instanceof WorkflowFailedError ? err.cause : undefined;
      if (cause instanceof ApplicationFailure && cause.type === FailureType.NotAuthorized) throw new NotAuthorizedError(cause.message);
      if (cause instanceof ApplicationFailure && cause.type === FailureType.SessionInputInvalid) throw new SessionValidationError(cause.message, cause.type);
      throw err;
    }
  }

  /** A user's long-term memories (active ones unless `statuses` says otherwise). */
  async listMemories(input: ListMemoriesInput): Promise<ListMemoriesResult> {
    const namespace = parseOr(UserNamespace, input.namespace, 'namespace');
    const principal = this.memoryPrincipal(namespace, 'listMemories');
    return this.runHelper<typeof listUserMemories>(
      'listUserMemories',
      `memories-list-${namespace.tenant}-${namespace.user}-${randomUUID()}`,
      [{ ...input, namespace, principal }],
      `listMemories of ${namespace.tenant}/${namespace.user}`,
    );
  }

  /** Deletes one of a user's memories; the audit trail keeps what it was. */
  async deleteMemory(input: DeleteMemoryInput): Promise<DeleteMemoryResult> {
    const namespace = parseOr(UserNamespace, input.namespace, 'namespace');
    const principal = this.memoryPrincipal(namespace, 'deleteMemory');
    checkMemoryId(input.memoryId);
    return this.runHelper<typeof deleteUserMemory>('deleteUserMemory', `memories-delete-${input.memoryId}-${randomUUID()}`, [{ ...input, namespace, principal }], `deleteMemory ${input.memoryId}`);
  }

  /** One memory's audit trail, oldest first: each change with its reason, who made it and when (a deletion names who deleted it). */
  async memoryAudit(input: MemoryAuditInput): Promise<MemoryAuditResult> {
    const namespace = parseOr(UserNamespace, input.namespace, 'namespace');
    const principal = this.memoryPrincipal(namespace, 'memoryAudit');
    checkMemoryId(input.memoryId);
    return this.runHelper<typeof readUserMemoryAudit>(
      'readUserMemoryAudit',
      `memories-audit-${input.memoryId}-${randomUUID()}`,
      [{ memoryId: input.memoryId, namespace, principal }],
      `memoryAudit ${input.memoryId}`,
    );
  }

  /**
   * A user's memories are theirs, or an admin's of their tenant: refused here
   * before any workflow starts, and checked again by the workflow (raw
   * clients come in there too).
   */
  private memoryPrincipal(namespace: UserNamespace, what: string): Principal {
    const principal = this.requirePrincipal(what);
    const own = principal.tenant === namespace.tenant && principal.user === namespace.user;
    if (!own && !hasTenantRole(namespace.tenant, principal, 'admin')) {
      throw new NotAuthorizedError(`Not authorized: ${principal.tenant}/${principal.user} may not read or delete memories of ${namespace.tenant}/${namespace.user}; only that user or an admin of that tenant may.`);
    }
    return principal;
  }

  /** The prompts the workers' MCP servers offer (servers that could not be asked are listed with why). */
  async listPrompts(): Promise<ListPromptsResult> {
    return this.runHelper<typeof listPrompts>('listPrompts', `prompts-list-${randomUUID()}`, [], 'listPrompts');
  }

  /**
   * Expands one MCP prompt with its arguments into the text of a user message;
   * send it with `send`/`ask` as the message (the chat's `/prompt` does).
   */
  async expandPrompt(server: string, name: string, args: Record<string, string> = {}): Promise<ExpandPromptResult> {
    const input = parseOr(ExpandPromptArgs, { server, name, arguments: args }, 'prompt');
    return this.runHelper<typeof expandPrompt>('expandPrompt', `prompts-expand-${randomUUID()}`, [input], `expandPrompt ${server}/${name}`);
  }

  /**
   * Runs one of the helper workflows (an archive page, a usage or memory
   * read, a prompt) and returns its result. Each may run for at most
   * HELPER_WORKFLOW_TIMEOUT: one started while no worker polls would wait on
   * the server for ever, long after its caller gave up.
   */
  private runHelper<W extends Workflow>(type: string, workflowId: string, args: Parameters<W>, operation: string, signal?: AbortSignal): Promise<WorkflowResultType<W>> {
    return this.deadline.watched(
      operation,
      () => {
        // The options' conditional type on `args` cannot be resolved for a generic workflow; the call sites are typed.
        const options = { taskQueue: this.taskQueue, workflowId, args, workflowExecutionTimeout: HELPER_WORKFLOW_TIMEOUT } as unknown as WorkflowStartOptions<W>;
        return this.client.workflow.execute<W>(type, options);
      },
      signal,
    );
  }

  /** The Web UI page of a session. */
  static webUiUrl(uiBase: string, namespace: string, sessionId: string): string {
    return `${uiBase.replace(/\/$/, '')}/namespaces/${encodeURIComponent(namespace)}/workflows/${encodeURIComponent(workflowIdFor(sessionId))}`;
  }
}

/** A memory id as listMemories returns it, refused here before a workflow is started for it. */
function checkMemoryId(memoryId: string): void {
  if (!/^mem_[0-9a-f]{6,64}$/.test(memoryId)) {
    throw new SessionValidationError(`Invalid memoryId "${memoryId}": expected "mem_" followed by hex digits, as listMemories returns.`);
  }
}
