import type { SearchAttributeUpdatePair } from '@temporalio/common';
import { ApplicationFailure, type CancellationScope, condition, upsertMemo, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import type { ToolCatalog } from './tool-spec';
import { PromptLedger } from './prompt-parts';
import { fitView } from './carried-state-budget';
import { EventEmitter } from './event-emitter';
import { FailureType } from './failure-types';
import type { Decision } from './react-turn';
import { SessionPendingApprovalsKey, SessionStatusKey } from './search-attributes';
import { SessionContext, emptyContext } from './session-context';
import type { Owner } from './principal';
import { MAX_FOLD_SKIP, type CarriedState, type QueuedMessage, type ToolCallRecord } from './session-state';
import {
  emptyCounters,
  type Activity,
  type PendingConfirmation,
  type SendMessageResult,
  type SessionCounters,
  type SessionOptions,
  type SessionStatus,
  type SessionView,
  type Turn,
  type TurnResult,
} from './session-types';
import { InputBook } from './input-book';
import { DeltaGate, ToolProgressGate } from './text-deltas';
import { ToolPins } from './tool-pins';
import { nowIso } from './workflow-clock';
import { inBaseline, isPatched } from './patches';

/** The current turn, while one runs. */
export interface RunningTurn {
  turnId: string;
  scope: CancellationScope;
  step: number;
  interruptReason?: string;
}

/**
 * The state of one run of a session, and the small moves every part of it
 * makes (status changes, interrupts, waiting for a turn's result). The
 * handlers, the turn runner, memory steps and the lifecycle each take it.
 */
/** Patch id: SessionStatus shows `awaiting_approval`, and a run closed by continue-as-new shows `continued`. */
export const STATUS_SHOWS_APPROVALS = inBaseline('status-shows-approvals');
/** Patch id: the count of calls waiting for a person is also the search attribute SessionPendingApprovals. */
export const PENDING_APPROVALS_ATTRIBUTE = inBaseline('pending-approvals-attribute');
/**
 * Patch id: the memo's `version` is written once a turn, when the turn ends,
 * not also when its message is accepted (one memo update, and one
 * visibility write on the server, per turn instead of two). While a turn
 * runs, the memo shows the version before its message.
 */
export const MEMO_VERSION_AT_TURN_END = inBaseline('memo-version-at-turn-end');

export class SessionRun {
  readonly sessionId: string;
  status: SessionStatus;
  activity: Activity = 'idle';
  createdAt: string;
  version: number;
  /** The archive version this chain of runs restored from; archive writes are conditional on it. */
  baseVersion: number;
  turnSeq: number;
  counters: SessionCounters;
  readonly windowLimits;
  context: SessionContext;
  readonly queue: QueuedMessage[];
  readonly processed: Map<string, SendMessageResult>;
  /** Message ids the session took before it was archived, with their turns (from the archive this run restored). */
  readonly archivedMessageIds = new Map<string, { turnId: string; version: number }>();
  readonly recentResults: TurnResult[];
  toolRecords: ToolCallRecord[];
  /** Tools as this session pinned them (hash and text), updated on re-approval. */
  readonly toolHashes: ToolPins;
  /** Prompt parts sent to the model by reference in this run (workflows/prompt-parts.ts). */
  readonly prompts = new PromptLedger();
  /** The tool catalog this run last read, by allow-list: a turn that finds it unchanged is told so, not sent it again. */
  heldCatalog: { allow: string; catalog: ToolCatalog } | undefined;
  pendingExtraction: Turn[];
  /** The last turn an extraction pass read (context for the next pass's confirmations). */
  lastExtractedTurn: Turn | undefined;
  /** Folds failed in a row, and turns still to end before the next fold is tried. */
  foldBackoff: { failures: number; skip: number };
  readonly pending = new Map<string, PendingConfirmation>();
  readonly decisions = new Map<string, Decision>();
  running: RunningTurn | null = null;
  endRequested = false;
  closing = false;
  /** sendMessage handlers accepted and not yet queued (waiting for the archive to be read): never carried, zero between activations' turns. */
  arriving = 0;
  /** Set once this run has decided to continue as new: handlers waiting for a turn let go. */
  continuing = false;
  /** False until a fresh run has read its archive (a restored session's first message waits for it). */
  restored: boolean;
  readonly events: EventEmitter;
  readonly deltaGate = new DeltaGate();
  readonly progressGate = new ToolProgressGate();
  /** Questions servers asked during running tool calls (elicitation), and their answers. */
  readonly inputs = new InputBook(this.progressGate);
  canUpsertStatus: boolean;
  /** SessionPendingApprovals was set at start (or by the session itself), so the namespace has it registered. */
  canUpsertPending: boolean;
  /** Whose session this is: fixed at creation, carried across continue-as-new, read back from the archive. */
  owner: Owner;
  /** Set when the message that started this run came from someone else than the owner: the run fails. */
  startRefused: string | undefined = undefined;
  /** Messages this run accepted (a refused first message fails the run only when none was). */
  acceptedInRun = 0;

  /** The session's options; the namespace's tenant and user are always the owner's (see `bindToOwner`). */
  options: SessionOptions;

  constructor(
    options: SessionOptions,
    /** `null` only in runs started so before patch `carried-state-checked`, which read it as carried (restored, nothing restored). */
    readonly carried: CarriedState | null | undefined,
    legacyExternalPublish: boolean,
  ) {
    const { limits } = options;
    this.sessionId = options.sessionId;
    this.status = carried?.status ?? 'created';
    this.createdAt = carried?.createdAt ?? nowIso();
    this.version = carried?.version ?? 0;
    this.baseVersion = carried?.baseVersion ?? 0;
    this.turnSeq = carried?.turnSeq ?? 0;
    // Counters added in later versions start at zero in runs carried from earlier ones, and so does one carried as
    // null (some early versions counted a counter their predecessor lacked as NaN, which JSON writes as null).
    this.counters = { ...emptyCounters() };
    for (const [name, value] of Object.entries(carried?.counters ?? {})) {
      (this.counters as Record<string, number>)[name] = typeof value === 'number' && Number.isFinite(value) ? value : 0;
    }
    this.windowLimits = { maxTurns: limits.windowMaxTurns, maxTokens: limits.windowMaxTokens, foldBatchTurns: limits.foldBatchTurns };
    this.context = new SessionContext(carried?.context ?? emptyContext(), this.windowLimits);
    this.queue = carried?.queue ?? [];
    this.endRequested = carried?.endRequested === true;
    this.processed = new Map(carried?.processed ?? []);
    for (const [id, r] of carried?.archivedMessageIds ?? []) this.archivedMessageIds.set(id, { turnId: r.turnId, version: r.version });
    this.recentResults = carried?.recentResults ?? [];
    this.toolRecords = carried?.toolRecords ?? [];
    this.toolHashes = new ToolPins(carried?.toolHashes ?? [], carried?.toolPinTexts ?? []);
    this.pendingExtraction = carried?.pendingExtraction ?? [];
    this.lastExtractedTurn = carried?.lastExtractedTurn;
    // Carried from the previous run; read defensively, as a client starting a run could send anything here.
    const count = (n: unknown, max: number): number => (typeof n === 'number' && Number.isInteger(n) && n > 0 ? Math.min(n, max) : 0);
    this.foldBackoff = { failures: count(carried?.foldBackoff?.failures, 1_000), skip: count(carried?.foldBackoff?.skip, MAX_FOLD_SKIP) };
    this.restored = carried !== undefined;
    this.options = options;
    this.owner = { tenant: options.namespace.tenant, user: options.namespace.user };
    if (carried?.owner) this.bindToOwner(carried.owner);
    this.events = new EventEmitter(
      this.sessionId,
      carried?.stream,
      {
        onIgnoredSignal: () => this.ignoreSignal(),
        onDroppedEvent: () => {
          this.counters.eventsDropped += 1;
        },
      },
      legacyExternalPublish,
    );
    this.canUpsertStatus = workflowInfo().typedSearchAttributes.get(SessionStatusKey) !== undefined;
    this.canUpsertPending = workflowInfo().typedSearchAttributes.get(SessionPendingApprovalsKey) !== undefined;
  }

  /**
   * The memo shows the version, so the Web UI lists it without a query.
   * Written when a turn ends (with `lastTurn`); runs from before
   * `MEMO_VERSION_AT_TURN_END` also wrote it when a message was accepted.
   */
  noteVersion(extra: Record<string, unknown> = {}): void {
    upsertMemo({ version: this.version, ...extra });
  }

  ignoreSignal(): void {
    this.counters.signalsIgnored += 1;
  }

  ignoreUnauthorizedSignal(): void {
    this.counters.signalsUnauthorized += 1;
  }

  emitStatus(reason?: string): void {
    this.events.emit({ type: 'status_change', status: this.status, activity: this.activity, turnId: this.running?.turnId, reason });
  }

  /**
   * SessionStatus says `awaiting_approval` while a call waits for a person,
   * and SessionPendingApprovals and the memo (`pendingApprovals`) say how
   * many, so the Web UI's list can filter the sessions that need someone.
   * Runs from before the patches do not.
   */
  notePendingApprovals(): void {
    if (!isPatched(STATUS_SHOWS_APPROVALS)) return;
    const waiting = this.pending.size;
    const attributes: SearchAttributeUpdatePair[] = [];
    if (this.canUpsertStatus) attributes.push({ key: SessionStatusKey, value: waiting > 0 ? 'awaiting_approval' : this.status });
    if (this.canUpsertPending && isPatched(PENDING_APPROVALS_ATTRIBUTE)) attributes.push({ key: SessionPendingApprovalsKey, value: waiting });
    if (attributes.length > 0) upsertSearchAttributes(attributes);
    upsertMemo({ pendingApprovals: waiting });
  }

  setStatus(next: SessionStatus, reason?: string, { emit = true }: { emit?: boolean } = {}): void {
    this.status = next;
    if (this.canUpsertStatus) upsertSearchAttributes([{ key: SessionStatusKey, value: next }]);
    upsertMemo({ status: next, version: this.version });
    if (emit) this.emitStatus(reason);
  }

  setActivity(next: Activity, reason?: string): void {
    if (next === this.activity) return;
    this.activity = next;
    this.emitStatus(reason);
  }

  interruptRunning(reason: string): void {
    const running = this.running;
    if (!running || running.interruptReason !== undefined) return;
    running.interruptReason = reason;
    running.scope.cancel();
  }

  findResult(turnId: string): TurnResult | undefined {
    return this.recentResults.find((r) => r.turnId === turnId);
  }

  knownTurn(turnId: string): boolean {
    return this.running?.turnId === turnId || this.queue.some((q) => q.turnId === turnId) || this.findResult(turnId) !== undefined;
  }

  /** Resolves with a turn's result once it has finished. */
  async turnResult(turnId: string, acceptedVersion?: number): Promise<TurnResult> {
    await condition(() => this.findResult(turnId) !== undefined || this.continuing);
    const result = this.findResult(turnId);
    if (result) return result;
    // An update cannot follow the session into its next run; the turn can (it is carried), so the caller waits again there.
    throw ApplicationFailure.create({
      type: FailureType.TurnCarriedOver,
      message: `Session ${this.sessionId} continued as a new run before ${turnId} ran; wait for ${turnId} again.`,
      details: [{ turnId, version: acceptedVersion }],
      nonRetryable: true,
    });
  }

  /**
   * Fixes the owner (from the previous run or the archive). Memories are
   * recalled and written, and tools run, for the owner's namespace, not for
   * whatever namespace the options of a later run name.
   */
  bindToOwner(owner: Owner): void {
    this.owner = { tenant: owner.tenant, user: owner.user };
    const ns = this.options.namespace;
    if (ns.tenant !== owner.tenant || ns.user !== owner.user) this.options = { ...this.options, namespace: { ...ns, tenant: owner.tenant, user: owner.user } };
  }

  view(): SessionView {
    const { view, dropped } = fitView(this.wholeView());
    return dropped.length > 0 ? { ...view, cut: dropped } : view;
  }

  private wholeView(): SessionView {
    const { options, context } = this;
    return {
      sessionId: this.sessionId,
      status: this.status,
      activity: this.activity,
      version: this.version,
      namespace: options.namespace,
      owner: this.owner,
      channel: options.channel,
      metadata: options.metadata,
      createdAt: this.createdAt,
      chainId: workflowInfo().firstExecutionRunId,
      currentTurnId: this.running?.turnId ?? null,
      currentStep: this.running?.step ?? 0,
      queuedMessages: this.queue.length,
      pendingConfirmations: [...this.pending.values()],
      pendingInputs: this.inputs.pendingInputs(),
      window: [...context.window],
      unfoldedTurns: context.unfolded.length,
      summary: context.summary,
      keyFacts: [...context.keyFacts],
      counters: this.counters,
      lastTurn: this.recentResults[this.recentResults.length - 1] ?? null,
    };
  }
}
