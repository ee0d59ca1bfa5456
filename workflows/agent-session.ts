import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  allHandlersFinished,
  condition,
  isCancellation,
  log,
  makeContinueAsNewFunc,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  upsertMemo,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { SessionActivities } from '../activities/activity-types';
import type { ArchivedSession } from '../activities/session-archive';
import type { MemoryActivities } from '../activities/memory/memory-activity-types';
import { shouldExtractNow } from './memory-events';
import type { ChatMessage } from './chat-message';
import { DEFAULT_SYSTEM_PROMPT } from './default-system-prompt';
import { SessionStatusKey, SessionTenantKey, SessionUserKey } from './search-attributes';
import { describeZodError, invalidInput, parseSignalInput, parseUpdateInput } from './input-guard';
import { DeltaGate, ToolProgressGate } from './text-deltas';
import { fitCarriedState } from './carried-state-budget';
import { EventEmitter } from './event-emitter';
import { FailureType } from './failure-types';
import {
  decideToolCallSignal,
  decideToolCallUpdate,
  endSessionSignal,
  getSessionQuery,
  interruptSignal,
  sendMessageUpdate,
  textDeltasSignal,
  toolProgressSignal,
  waitForTurnUpdate,
} from './messages';
import { ModelCallFailed, runReactTurn, waitForDecision, type Decision } from './react-turn';
import { SessionContext, emptyContext } from './session-context';
import {
  DEDUPE_MEMORY,
  RESULT_MEMORY,
  STREAM_BYTES_KEPT,
  TOOL_RECORD_MEMORY,
  type CarriedState,
  type QueuedMessage,
  type ToolCallRecord,
} from './session-state';
import {
  DecideToolCallInput,
  EndSessionInput,
  InterruptInput,
  SendMessageInput,
  SessionOptions,
  TextDeltasInput,
  ToolProgressInput,
  WaitForTurnInput,
  emptyCounters,
  type Activity,
  type PendingConfirmation,
  type SendMessageResult,
  type SessionOptionsInput,
  type SessionStatus,
  type SessionView,
  type Turn,
  type TurnOutcome,
  type TurnResult,
} from './session-types';
import { nowIso, nowMs } from './workflow-clock';

export interface AgentSessionInput {
  options: SessionOptionsInput;
  /** Present after continue-as-new. */
  carried?: CarriedState;
}

export interface AgentSessionResult {
  sessionId: string;
  status: 'archived';
  version: number;
  turns: number;
  /** Set when another run wrote the archive first (concurrent restore); this run's archive was not written. */
  archiveConflict?: string;
}

const { describeSearchAttributes } = proxyLocalActivities<SessionActivities>({
  startToCloseTimeout: '10 seconds',
  retry: { maximumAttempts: 3, initialInterval: '200 milliseconds' },
});

/**
 * Patch id: events are published by the workflow only (activities signal
 * `textDeltas` and `toolProgress`); runs begun before keep the stream
 * library's publish signal until they continue as new.
 */
export const EVENTS_FROM_WORKFLOW_ONLY = 'events-from-workflow-only';

/** Patch id: the session sets its own search attributes when the starter did not. */
export const SESSION_SETS_SEARCH_ATTRIBUTES = 'session-sets-search-attributes';

const { summarizeTurns, loadArchive, saveArchive } = proxyActivities<SessionActivities>({
  startToCloseTimeout: '2 minutes',
  retry: { maximumAttempts: 3, initialInterval: '1 second', nonRetryableErrorTypes: [FailureType.ModelRequestInvalid, FailureType.ModelAuthFailed] },
});

// Recall reads MongoDB and scores in memory: short, so a local activity spares a server round trip per turn.
const { recallMemories } = proxyLocalActivities<MemoryActivities>({
  startToCloseTimeout: '10 seconds',
  retry: { maximumAttempts: 2, initialInterval: '200 milliseconds' },
});
const { extractMemories } = proxyActivities<MemoryActivities>({
  startToCloseTimeout: '2 minutes',
  retry: { maximumAttempts: 3, initialInterval: '1 second', nonRetryableErrorTypes: [FailureType.ModelRequestInvalid, FailureType.ModelAuthFailed] },
});

/** Turns kept for the next memory extraction pass, at most. */
const MAX_PENDING_EXTRACTION = 20;

/**
 * A session started with options that do not parse still answers the
 * update it was started with (update-with-start): every update is refused
 * with the options error, then the run fails with it. Without handlers the
 * caller would read "No registered handler for update" instead.
 */
function refuseStart(message: string): never {
  const refuse = (): void => {
    throw invalidInput(message);
  };
  setHandler(sendMessageUpdate, (_input) => Promise.reject(invalidInput(message)), { validator: (_input) => refuse() });
  setHandler(decideToolCallUpdate, (_input) => Promise.reject(invalidInput(message)), { validator: (_input) => refuse() });
  setHandler(waitForTurnUpdate, (_input) => Promise.reject(invalidInput(message)), { validator: (_input) => refuse() });
  throw invalidInput(message);
}

function versionConflict(sessionId: string, version: number, expected: number): ApplicationFailure {
  return ApplicationFailure.create({
    message: `Session ${sessionId} is at version ${version}, not ${expected}. Reload the session and retry.`,
    type: FailureType.SessionVersionConflict,
    nonRetryable: true,
    details: [{ currentVersion: version, expectedVersion: expected }],
  });
}

/** The current turn, while one runs. */
interface RunningTurn {
  turnId: string;
  scope: CancellationScope;
  step: number;
  interruptReason?: string;
}

/**
 * One conversation session. Messages arrive as `sendMessage` updates and are
 * run one turn at a time through the ReAct loop; risky tool calls wait for
 * `decideToolCall`; `interrupt` cancels the running turn for real. Idle past
 * its timeout, the session archives itself to MongoDB and completes; the
 * next message starts a new run restored from that archive.
 */
export async function agentSession(input: AgentSessionInput): Promise<AgentSessionResult> {
  const parsed = SessionOptions.safeParse(input?.options);
  if (!parsed.success) refuseStart(`Invalid session options: ${describeZodError(parsed.error)}`);
  const options = parsed.data;
  const { sessionId, limits } = options;
  const carried = input.carried;

  let status: SessionStatus = carried?.status ?? 'created';
  let activity: Activity = 'idle';
  let createdAt = carried?.createdAt ?? nowIso();
  let version = carried?.version ?? 0;
  let baseVersion = carried?.baseVersion ?? 0;
  let turnSeq = carried?.turnSeq ?? 0;
  // Counters added in later versions start at zero in runs carried from earlier ones.
  let counters = { ...emptyCounters(), ...carried?.counters };
  const windowLimits = { maxTurns: limits.windowMaxTurns, maxTokens: limits.windowMaxTokens, foldBatchTurns: limits.foldBatchTurns };
  let context = new SessionContext(carried?.context ?? emptyContext(), windowLimits);
  const queue: QueuedMessage[] = carried?.queue ?? [];
  const processed = new Map<string, SendMessageResult>(carried?.processed ?? []);
  const recentResults: TurnResult[] = carried?.recentResults ?? [];
  let toolRecords: ToolCallRecord[] = carried?.toolRecords ?? [];
  const toolHashes = new Map<string, string>(carried?.toolHashes ?? []);
  let pendingExtraction: Turn[] = carried?.pendingExtraction ?? [];
  let memoryWork: Promise<void> = Promise.resolve();
  const pending = new Map<string, PendingConfirmation>();
  const decisions = new Map<string, Decision>();
  let running: RunningTurn | null = null;
  let endRequested = false;
  let closing = false;
  /** Set once this run has decided to continue as new: handlers waiting for a turn let go. */
  let continuing = false;
  let restored = carried !== undefined;

  const ignoreSignal = (): void => {
    counters.signalsIgnored += 1;
  };
  const events = new EventEmitter(
    sessionId,
    carried?.stream,
    {
      onIgnoredSignal: ignoreSignal,
      onDroppedEvent: () => {
        counters.eventsDropped += 1;
      },
    },
    !patched(EVENTS_FROM_WORKFLOW_ONLY),
  );
  const deltaGate = new DeltaGate();
  const progressGate = new ToolProgressGate();
  let canUpsertStatus = workflowInfo().typedSearchAttributes.get(SessionStatusKey) !== undefined;

  const emitStatus = (reason?: string) => events.emit({ type: 'status_change', status, activity, turnId: running?.turnId, reason });
  const setStatus = (next: SessionStatus, reason?: string): void => {
    status = next;
    if (canUpsertStatus) upsertSearchAttributes([{ key: SessionStatusKey, value: next }]);
    upsertMemo({ status: next, version });
    emitStatus(reason);
  };
  const setActivity = (next: Activity, reason?: string): void => {
    if (next === activity) return;
    activity = next;
    emitStatus(reason);
  };

  setHandler(getSessionQuery, (): SessionView => ({
    sessionId,
    status,
    activity,
    version,
    namespace: options.namespace,
    channel: options.channel,
    metadata: options.metadata,
    createdAt,
    currentTurnId: running?.turnId ?? null,
    currentStep: running?.step ?? 0,
    queuedMessages: queue.length,
    pendingConfirmations: [...pending.values()],
    window: [...context.window],
    unfoldedTurns: context.unfolded.length,
    summary: context.summary,
    keyFacts: [...context.keyFacts],
    counters,
    lastTurn: recentResults[recentResults.length - 1] ?? null,
  }));

  const interruptRunning = (reason: string): void => {
    if (!running || running.interruptReason !== undefined) return;
    running.interruptReason = reason;
    running.scope.cancel();
  };

  const findResult = (turnId: string): TurnResult | undefined => recentResults.find((r) => r.turnId === turnId);
  /** Resolves with a turn's result once it has finished. */
  const turnResult = async (turnId: string, acceptedVersion?: number): Promise<TurnResult> => {
    await condition(() => findResult(turnId) !== undefined || continuing);
    const result = findResult(turnId);
    if (result) return result;
    // An update cannot follow the session into its next run; the turn can (it is carried), so the caller waits again there.
    throw ApplicationFailure.create({
      type: FailureType.TurnCarriedOver,
      message: `Session ${sessionId} continued as a new run before ${turnId} ran; wait for ${turnId} again.`,
      details: [{ turnId, version: acceptedVersion }],
      nonRetryable: true,
    });
  };

  setHandler(
    sendMessageUpdate,
    async (raw): Promise<SendMessageResult> => {
      // The validator has accepted it already; parsing again gives the typed value with defaults.
      const msg = parseUpdateInput(SendMessageInput, raw, 'sendMessage');
      // The first message of a restored session may arrive before the archive is read.
      await condition(() => restored);
      const seen = msg.clientMessageId ? processed.get(msg.clientMessageId) : undefined;
      if (seen) return msg.waitForTurn ? { ...seen, turn: await turnResult(seen.turnId, seen.version) } : seen;
      if (msg.expectedVersion !== undefined && msg.expectedVersion !== version) throw versionConflict(sessionId, version, msg.expectedVersion);
      version += 1;
      turnSeq += 1;
      const result: SendMessageResult = { turnId: `turn-${turnSeq}`, version };
      if (msg.clientMessageId) {
        processed.set(msg.clientMessageId, result);
        if (processed.size > DEDUPE_MEMORY) processed.delete(processed.keys().next().value as string);
      }
      queue.push({ turnId: result.turnId, text: msg.text, clientMessageId: msg.clientMessageId, receivedAt: nowIso() });
      upsertMemo({ version });
      if (running && options.busyPolicy === 'interrupt') interruptRunning('a new message arrived');
      return msg.waitForTurn ? { ...result, turn: await turnResult(result.turnId, result.version) } : result;
    },
    {
      validator: (raw) => {
        const msg = { data: parseUpdateInput(SendMessageInput, raw, 'sendMessage') };
        if (msg.data.clientMessageId && processed.has(msg.data.clientMessageId)) return;
        if (closing || status === 'expired') {
          throw ApplicationFailure.nonRetryable(`Session ${sessionId} is ${closing ? 'closing' : status}; send the message again to start it anew.`, FailureType.SessionClosed);
        }
        if (restored && msg.data.expectedVersion !== undefined && msg.data.expectedVersion !== version) {
          throw versionConflict(sessionId, version, msg.data.expectedVersion);
        }
      },
    },
  );

  const decide = (decision: DecideToolCallInput, via: 'signal' | 'update'): void => {
    if (!pending.has(decision.toolCallId) || decisions.has(decision.toolCallId)) {
      log.warn('Ignoring a decision for an unknown or decided tool call', { toolCallId: decision.toolCallId, via });
      if (via === 'signal') ignoreSignal();
      return;
    }
    decisions.set(decision.toolCallId, { approved: decision.approved, reason: decision.reason, decidedBy: 'user' });
  };
  setHandler(decideToolCallSignal, (raw) => {
    const decision = parseSignalInput(DecideToolCallInput, raw, 'decideToolCall', ignoreSignal);
    if (decision) decide(decision, 'signal');
  });
  setHandler(
    decideToolCallUpdate,
    (raw) => {
      decide(parseUpdateInput(DecideToolCallInput, raw, 'decideToolCall'), 'update');
      return { accepted: true as const };
    },
    {
      validator: (raw) => {
        const id = parseUpdateInput(DecideToolCallInput, raw, 'decideToolCall').toolCallId;
        if (!pending.has(id)) throw ApplicationFailure.nonRetryable(`No tool call ${id} is waiting for confirmation.`, FailureType.ConfirmationUnknown);
        if (decisions.has(id)) throw ApplicationFailure.nonRetryable(`Tool call ${id} was already decided.`, FailureType.ConfirmationUnknown);
      },
    },
  );

  setHandler(interruptSignal, (raw) => {
    const input = parseSignalInput(InterruptInput, raw, 'interrupt', ignoreSignal);
    if (!input || !running) return;
    counters.interrupts += 1;
    interruptRunning(input.reason ?? 'interrupted by the user');
  });
  setHandler(endSessionSignal, (raw) => {
    if (parseSignalInput(EndSessionInput, raw, 'endSession', ignoreSignal)) endRequested = true;
  });
  const knownTurn = (turnId: string): boolean =>
    running?.turnId === turnId || queue.some((q) => q.turnId === turnId) || findResult(turnId) !== undefined;
  setHandler(waitForTurnUpdate, async (raw) => turnResult(parseUpdateInput(WaitForTurnInput, raw, 'waitForTurn').turnId), {
    validator: (raw) => {
      const { turnId } = parseUpdateInput(WaitForTurnInput, raw, 'waitForTurn');
      if (!knownTurn(turnId)) throw invalidInput(`Turn ${turnId} is unknown to session ${sessionId}.`);
    },
  });

  setHandler(textDeltasSignal, (raw) => {
    const input = parseSignalInput(TextDeltasInput, raw, 'textDeltas', ignoreSignal);
    if (!input) return;
    const refused = deltaGate.admit(input, running);
    if (refused) {
      log.warn(`Ignoring text deltas: ${refused}`);
      ignoreSignal();
      return;
    }
    for (const { delta } of input.deltas) events.emit({ type: 'text_delta', turnId: input.turnId, step: input.step, attempt: input.attempt, delta });
  });
  setHandler(toolProgressSignal, (raw) => {
    const input = parseSignalInput(ToolProgressInput, raw, 'toolProgress', ignoreSignal);
    if (!input) return;
    const call = progressGate.admit(input);
    if (typeof call === 'string') {
      log.warn(`Ignoring tool progress: ${call}`);
      ignoreSignal();
      return;
    }
    const { turnId, toolCallId, progress, total, message } = input;
    events.emit({ type: 'tool_call_progress', turnId, toolCallId, ...call, progress, total, message });
  });
  const publishFinalDeltas = (turnId: string, step: number, attempt: number, deltas: readonly string[]): void => {
    deltaGate.close(turnId, step, attempt);
    for (const delta of deltas) events.emit({ type: 'text_delta', turnId, step, attempt, delta });
  };

  const awaitDecision = async (confirmation: PendingConfirmation): Promise<Decision> => {
    pending.set(confirmation.toolCallId, confirmation);
    counters.confirmationsRequested += 1;
    events.emit({ type: 'confirmation_required', confirmation });
    setActivity('awaiting_confirmation');
    try {
      const decision = await waitForDecision(() => decisions.get(confirmation.toolCallId), limits.confirmationTimeoutMs);
      events.emit({ type: 'confirmation_decided', toolCallId: confirmation.toolCallId, approved: decision.approved, reason: decision.reason, decidedBy: decision.decidedBy });
      return decision;
    } catch (err) {
      if (isCancellation(err)) {
        events.emit({ type: 'confirmation_decided', toolCallId: confirmation.toolCallId, approved: false, decidedBy: 'interrupt' });
      }
      throw err;
    } finally {
      pending.delete(confirmation.toolCallId);
      decisions.delete(confirmation.toolCallId);
      if (pending.size === 0 && activity === 'awaiting_confirmation') setActivity('running_tools');
    }
  };

  /**
   * Sessions started by another client (another SDK, the CLI) may come
   * without search attributes, and would be invisible to the UI's filters.
   * The session sets those it lacks, when the namespace has them registered
   * (setting an unregistered one would fail the workflow task).
   */
  async function ensureSearchAttributes(): Promise<void> {
    const current = workflowInfo().typedSearchAttributes;
    const wanted = [
      { key: SessionUserKey, value: options.namespace.user },
      { key: SessionTenantKey, value: options.namespace.tenant },
      { key: SessionStatusKey, value: status },
    ];
    const missing = wanted.filter((w) => current.get(w.key) === undefined);
    if (missing.length === 0 || carried !== undefined || !patched(SESSION_SETS_SEARCH_ATTRIBUTES)) return;
    const registered = new Set(await describeSearchAttributes({ names: missing.map((m) => m.key.name) }));
    const settable = missing.filter((m) => registered.has(m.key.name));
    if (settable.length === 0) return;
    upsertSearchAttributes(settable);
    canUpsertStatus ||= settable.some((m) => m.key.name === SessionStatusKey.name);
  }

  /** Recalled memories for this turn's prompt; a failed recall costs the turn its memories, not the turn. */
  const recall = async (turnId: string, query: string) => {
    const none = { lines: { strong: [] as string[], weak: [] as string[] }, injectedIds: [] as string[] };
    if (!options.memory.enabled) return none;
    try {
      const r = await recallMemories.executeWithOptions(
        { startToCloseTimeout: '10 seconds', retry: { maximumAttempts: 2, initialInterval: '200 milliseconds' }, summary: 'recall memories' },
        [{ namespace: options.namespace, query, sessionId, turnId }],
      );
      counters.memoriesRecalled += r.strong.length + r.weak.length;
      if (r.strong.length + r.weak.length > 0) {
        events.emit({ type: 'memory_recalled', turnId, strong: r.strong.map((m) => m.shortId), weak: r.weak.map((m) => m.shortId), tookMs: r.tookMs });
      }
      return { lines: { strong: r.strong.map((m) => m.line), weak: r.weak.map((m) => m.line) }, injectedIds: r.injectedIds };
    } catch (err) {
      if (isCancellation(err)) throw err;
      events.emit({ type: 'error', turnId, errorType: 'MemoryRecallFailed', message: `Memories could not be recalled this turn: ${err instanceof Error ? err.message : String(err)}` });
      return none;
    }
  };

  /**
   * Extracts long-term memories from the turns since the last pass, in the
   * background: the next turn does not wait for it, continue-as-new and
   * archive do.
   */
  const scheduleExtraction = (reason: 'event' | 'periodic' | 'archive'): void => {
    const turns = pendingExtraction;
    pendingExtraction = [];
    if (turns.length === 0) return;
    memoryWork = memoryWork.then(async () => {
      try {
        await extractMemories.executeWithOptions(
          {
            startToCloseTimeout: '2 minutes',
            retry: { maximumAttempts: 3, initialInterval: '1 second', nonRetryableErrorTypes: [FailureType.ModelRequestInvalid, FailureType.ModelAuthFailed] },
            summary: `extract memories (${reason}, ${turns.length} turns)`,
          },
          [{ namespace: options.namespace, sessionId, turns: turns.map((t) => ({ turnId: t.turnId, messages: t.messages, startedAt: t.startedAt })), reason }],
        );
        counters.memoryExtractions += 1;
      } catch (err) {
        if (!(err instanceof ActivityFailure)) throw err;
        events.emit({ type: 'error', errorType: 'MemoryExtractionFailed', message: `Memory extraction (${reason}) failed: ${err.cause?.message ?? err.message}` });
      }
    });
  };

  const runTurn = async (message: QueuedMessage): Promise<void> => {
    const turn: RunningTurn = { turnId: message.turnId, scope: new CancellationScope(), step: 0 };
    running = turn;
    if (status !== 'active') setStatus('active');
    const messages: ChatMessage[] = [{ role: 'user', content: message.text }];
    let outcome: TurnOutcome = 'completed';
    let text = '';
    let modelCalls = 0;
    let modelAttempts = 0;
    let toolCalls = 0;
    let error: string | undefined;
    try {
      const result = await turn.scope.run(async () => {
        const memory = await recall(turn.turnId, message.text);
        return runReactTurn({
          sessionId,
          turnId: turn.turnId,
          options,
          events,
          prefix: context.prompt(options.systemPrompt ?? DEFAULT_SYSTEM_PROMPT, [], memory.lines),
          messages,
          citations:
            options.memory.enabled && options.memory.citationCheck
              ? {
                  injectedIds: memory.injectedIds,
                  onFlag: (unknownIds, action) => {
                    if (action === 'regenerated') counters.citationsRegenerated += 1;
                    else counters.citationsFlagged += 1;
                    events.emit({ type: 'citation_flagged', turnId: turn.turnId, unknownIds, action });
                  },
                }
              : undefined,
          toolHashes,
          onStep: (step) => {
            turn.step = step;
          },
          onModelCall: (attempt) => {
            counters.modelCalls += 1;
            counters.modelAttempts += attempt;
            modelCalls += 1;
            modelAttempts += attempt;
          },
          onModelFailure: () => {
            counters.modelFailures += 1;
            counters.modelAttempts += 1;
            modelAttempts += 1;
          },
          progress: progressGate,
          publishDeltas: (step, attempt, deltas) => publishFinalDeltas(turn.turnId, step, attempt, deltas),
          onToolCall: (record) => {
            counters.toolCalls += 1;
            toolCalls += 1;
            if (record.status !== 'ok') counters.toolFailures += 1;
            toolRecords = [...toolRecords, { ...record, turnId: turn.turnId }].slice(-TOOL_RECORD_MEMORY);
          },
          awaitDecision,
          setActivity,
        });
      });
      text = result.text;
      if (result.hitStepLimit) {
        outcome = 'step_limit';
        messages.push({ role: 'assistant', content: text.split('\n\n').pop() ?? text });
        setActivity('idle', `step limit of ${limits.maxSteps} reached`);
      }
    } catch (err) {
      if (isCancellation(err)) {
        outcome = 'interrupted';
        const partial = events.streamedText(turn.turnId, turn.step);
        // Tool calls without results would be rejected by the model API next turn: keep the text only.
        const kept = messages.filter((m) => m.role === 'user' || (m.role === 'assistant' && !m.tool_calls));
        messages.splice(0, messages.length, ...kept);
        text = partial;
        messages.push({ role: 'assistant', content: `${partial}${partial ? ' ' : ''}[interrupted: ${turn.interruptReason ?? 'interrupted'}]` });
      } else if (err instanceof ModelCallFailed) {
        outcome = 'failed';
        error = `${err.errorType}: ${err.message}`;
        events.emit({ type: 'error', turnId: turn.turnId, errorType: err.errorType, message: err.message });
      } else {
        throw err;
      }
    }
    counters.turns += 1;
    const finished: Turn = { turnId: turn.turnId, messages, outcome, startedAt: message.receivedAt, endedAt: nowIso() };
    context.addTurn(finished);
    if (options.memory.enabled) {
      pendingExtraction = [...pendingExtraction, finished].slice(-MAX_PENDING_EXTRACTION);
      if (shouldExtractNow(message.text)) scheduleExtraction('event');
      else if (pendingExtraction.length >= options.memory.extractEveryTurns) scheduleExtraction('periodic');
    }
    const result: TurnResult = { turnId: turn.turnId, outcome, text, modelCalls, modelAttempts, toolCalls, error };
    recentResults.push(result);
    if (recentResults.length > RESULT_MEMORY) recentResults.shift();
    running = null;
    activity = 'idle';
    emitStatus(outcome === 'interrupted' ? turn.interruptReason : outcome);
    events.emit({ type: 'turn_completed', turnId: turn.turnId, outcome, text, version });
    upsertMemo({ version, lastTurn: turn.turnId });
  };

  /** Folds evicted turns into the summary; on failure they stay raw in the prompt and the fold is tried next turn. */
  const foldEvicted = async (): Promise<void> => {
    const turns = context.pendingFold();
    if (turns.length === 0) return;
    try {
      const summary = await summarizeTurns.executeWithOptions(
        {
          startToCloseTimeout: '2 minutes',
          retry: { maximumAttempts: 3, initialInterval: '1 second', nonRetryableErrorTypes: [FailureType.ModelRequestInvalid, FailureType.ModelAuthFailed] },
          summary: `fold ${turns.length} turns into the summary`,
        },
        [{ sessionId, previous: context.summary, evicted: turns }],
      );
      context.folded(turns, summary);
      counters.summariesFolded += 1;
    } catch (err) {
      if (!(err instanceof ActivityFailure)) throw err;
      counters.summaryFailures += 1;
      events.emit({
        type: 'error',
        errorType: 'SummaryFailed',
        message: `Could not fold ${turns.length} turns into the summary (${err.cause?.message ?? err.message}); they stay in the prompt verbatim and the fold is retried after the next turn.`,
      });
    }
  };

  const restore = (archive: ArchivedSession): void => {
    createdAt = archive.createdAt;
    version = archive.version;
    baseVersion = archive.version;
    turnSeq = archive.turnSeq;
    counters = { ...emptyCounters(), ...archive.counters };
    context = new SessionContext({ window: archive.window, unfolded: [], summary: archive.summary, keyFacts: archive.keyFacts }, windowLimits);
    toolRecords = archive.toolCalls;
    status = 'archived';
  };

  // A run must stay under its history budget, so continue as new while one more turn still fits:
  // the headroom is the largest turn seen so far, plus margin for the continue-as-new itself.
  let largestTurnEvents = 0;
  const historyTooLong = (): boolean => {
    const info = workflowInfo();
    return info.continueAsNewSuggested || info.historyLength + Math.ceil(largestTurnEvents * 1.5) + 20 > limits.maxHistoryEvents;
  };

  const snapshot = (): CarriedState => {
    const state = events.stream.getState();
    let bytes = 0;
    let keepFrom = state.log.length;
    while (keepFrom > 0 && bytes + (state.log[keepFrom - 1]?.data.length ?? 0) <= STREAM_BYTES_KEPT) bytes += state.log[--keepFrom]?.data.length ?? 0;
    if (keepFrom > 0) events.stream.truncate(state.base_offset + keepFrom);
    const fitted = fitCarriedState({
      status,
      createdAt,
      version,
      baseVersion,
      turnSeq,
      context: context.toState(),
      counters,
      queue,
      processed: [...processed.entries()],
      recentResults,
      toolRecords,
      toolHashes: [...toolHashes.entries()],
      pendingExtraction,
      stream: events.stream.getState(),
    });
    if (fitted.dropped.length > 0) log.warn(`Carried state over the payload budget; left out ${fitted.dropped.join(', ')}`);
    return fitted.state;
  };

  await ensureSearchAttributes();

  if (!restored) {
    const archive = await loadArchive.executeWithOptions({ startToCloseTimeout: '30 seconds', summary: 'load archive' }, [{ sessionId }]);
    if (archive && archive.status === 'archived') restore(archive);
    restored = true;
  }

  for (;;) {
    const woke = await condition(() => queue.length > 0 || endRequested, limits.idleTimeoutMs);
    const next = queue.shift();
    if (next) {
      const before = workflowInfo().historyLength;
      await runTurn(next);
      await foldEvicted();
      largestTurnEvents = Math.max(largestTurnEvents, workflowInfo().historyLength - before);
      if (historyTooLong() && queue.length === 0) {
        await memoryWork;
        counters.continuedAsNew += 1;
        continuing = true;
        events.stream.detachPollers();
        await condition(allHandlersFinished);
        const continueAsNew = makeContinueAsNewFunc<typeof agentSession>();
        return continueAsNew({ options: input.options, carried: snapshot() });
      }
      continue;
    }
    if (!woke || endRequested) break;
  }

  closing = true;
  if (options.memory.enabled) scheduleExtraction('archive');
  await memoryWork;
  // Event readers long-poll through updates; detach them, or waiting for handlers would wait for the next event forever.
  events.stream.detachPollers();
  await condition(allHandlersFinished);
  const archivedAt = nowMs();
  const archive: ArchivedSession = {
    sessionId,
    namespace: options.namespace,
    channel: options.channel,
    metadata: options.metadata,
    createdAt,
    archivedAt: new Date(archivedAt).toISOString(),
    expiresAt: new Date(archivedAt + limits.retentionMs).toISOString(),
    status: 'archived',
    version,
    turnSeq,
    window: [...context.unfolded, ...context.window],
    summary: context.summary,
    keyFacts: [...context.keyFacts],
    toolCalls: toolRecords,
    counters,
  };
  let archiveConflict: string | undefined;
  try {
    await saveArchive.executeWithOptions({ startToCloseTimeout: '30 seconds', summary: 'archive session' }, [{ archive, baseVersion }]);
  } catch (err) {
    if (!(err instanceof ActivityFailure && err.cause instanceof ApplicationFailure && err.cause.type === FailureType.SessionVersionConflict)) throw err;
    archiveConflict = err.cause.message;
    events.emit({ type: 'error', errorType: FailureType.SessionVersionConflict, message: archiveConflict });
  }
  setStatus('archived', endRequested ? 'ended by request' : 'idle timeout');
  return { sessionId, status: 'archived', version, turns: counters.turns, ...(archiveConflict ? { archiveConflict } : {}) };
}
