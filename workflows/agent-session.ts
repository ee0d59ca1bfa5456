import {
  ApplicationFailure,
  CancellationScope,
  allHandlersFinished,
  condition,
  isCancellation,
  log,
  makeContinueAsNewFunc,
  setHandler,
  upsertMemo,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import { defineSearchAttributeKey } from '@temporalio/common';
import type { ChatMessage } from './chat-message';
import { DEFAULT_SYSTEM_PROMPT } from './default-system-prompt';
import { EventEmitter } from './event-emitter';
import { FailureType } from './failure-types';
import {
  decideToolCallSignal,
  decideToolCallUpdate,
  endSessionSignal,
  getSessionQuery,
  interruptSignal,
  sendMessageUpdate,
  waitForTurnUpdate,
} from './messages';
import { ModelCallFailed, runReactTurn, waitForDecision, type Decision } from './react-turn';
import { DEDUPE_MEMORY, RESULT_MEMORY, type CarriedState, type QueuedMessage } from './session-state';
import {
  DecideToolCallInput,
  SendMessageInput,
  SessionOptions,
  emptyCounters,
  type Activity,
  type PendingConfirmation,
  type SendMessageResult,
  type SessionOptionsInput,
  type SessionView,
  type Turn,
  type TurnOutcome,
  type TurnResult,
} from './session-types';
import { nowIso } from './workflow-clock';

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
}

const SessionStatusKey = defineSearchAttributeKey('SessionStatus', 'KEYWORD');

/** Keeps the raw window bounded until the summary layer takes over eviction. */
const MAX_WINDOW_TURNS = 20;

function invalid(message: string): ApplicationFailure {
  return ApplicationFailure.nonRetryable(message, FailureType.SessionInputInvalid);
}

function describeZodError(error: { issues: Array<{ path: PropertyKey[]; message: string }> }): string {
  return error.issues.map((i) => `${i.path.length ? i.path.join('.') : '(input)'}: ${i.message}`).join('; ');
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
 * `decideToolCall`; `interrupt` cancels the running turn for real.
 */
export async function agentSession(input: AgentSessionInput): Promise<AgentSessionResult> {
  const parsed = SessionOptions.safeParse(input.options);
  if (!parsed.success) throw invalid(`Invalid session options: ${describeZodError(parsed.error)}`);
  const options = parsed.data;
  const { sessionId } = options;
  const carried = input.carried;

  let status = carried?.status ?? 'created';
  let activity: Activity = 'idle';
  const createdAt = carried?.createdAt ?? nowIso();
  let version = carried?.version ?? 0;
  let turnSeq = carried?.turnSeq ?? 0;
  let window: Turn[] = carried?.window ?? [];
  const counters = carried?.counters ?? emptyCounters();
  const queue: QueuedMessage[] = carried?.queue ?? [];
  const processed = new Map<string, SendMessageResult>(carried?.processed ?? []);
  const recentResults: TurnResult[] = carried?.recentResults ?? [];
  const pending = new Map<string, PendingConfirmation>();
  const decisions = new Map<string, Decision>();
  let running: RunningTurn | null = null;
  let endRequested = false;
  let closing = false;

  const events = new EventEmitter(sessionId, carried?.stream);
  const canUpsertStatus = workflowInfo().typedSearchAttributes.get(SessionStatusKey) !== undefined;

  const setStatus = (next: typeof status, reason?: string): void => {
    status = next;
    if (canUpsertStatus) upsertSearchAttributes([{ key: SessionStatusKey, value: next }]);
    upsertMemo({ status: next, version });
    events.emit({ type: 'status_change', status, activity, turnId: running?.turnId, reason });
  };
  const setActivity = (next: Activity, reason?: string): void => {
    if (next === activity) return;
    activity = next;
    events.emit({ type: 'status_change', status, activity, turnId: running?.turnId, reason });
  };

  const view = (): SessionView => ({
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
    window,
    counters,
    lastTurn: recentResults[recentResults.length - 1] ?? null,
  });

  const interruptRunning = (reason: string): void => {
    if (!running || running.interruptReason !== undefined) return;
    running.interruptReason = reason;
    running.scope.cancel();
  };

  setHandler(getSessionQuery, view);

  setHandler(
    sendMessageUpdate,
    (raw): SendMessageResult => {
      const msg = SendMessageInput.parse(raw);
      const seen = msg.clientMessageId ? processed.get(msg.clientMessageId) : undefined;
      if (seen) return seen;
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
      return result;
    },
    {
      validator: (raw) => {
        const msg = SendMessageInput.safeParse(raw);
        if (!msg.success) throw invalid(`Invalid sendMessage input: ${describeZodError(msg.error)}`);
        if (msg.data.clientMessageId && processed.has(msg.data.clientMessageId)) return;
        if (closing || status === 'archived' || status === 'expired') {
          throw ApplicationFailure.nonRetryable(`Session ${sessionId} is ${closing ? 'closing' : status}; start it again with a new message.`, FailureType.SessionClosed);
        }
        if (msg.data.expectedVersion !== undefined && msg.data.expectedVersion !== version) {
          throw ApplicationFailure.create({
            message: `Session ${sessionId} is at version ${version}, not ${msg.data.expectedVersion}. Reload the session and retry.`,
            type: FailureType.SessionVersionConflict,
            nonRetryable: true,
            details: [{ currentVersion: version, expectedVersion: msg.data.expectedVersion }],
          });
        }
      },
    },
  );

  const decide = (raw: unknown, via: 'signal' | 'update'): void => {
    const input = DecideToolCallInput.parse(raw);
    if (!pending.has(input.toolCallId) || decisions.has(input.toolCallId)) {
      log.warn('Ignoring a decision for an unknown or decided tool call', { toolCallId: input.toolCallId, via });
      return;
    }
    decisions.set(input.toolCallId, { approved: input.approved, reason: input.reason, decidedBy: 'user' });
  };
  setHandler(decideToolCallSignal, (raw) => decide(raw, 'signal'));
  setHandler(
    decideToolCallUpdate,
    (raw) => {
      decide(raw, 'update');
      return { accepted: true as const };
    },
    {
      validator: (raw) => {
        const input = DecideToolCallInput.safeParse(raw);
        if (!input.success) throw invalid(`Invalid decideToolCall input: ${describeZodError(input.error)}`);
        const id = input.data.toolCallId;
        if (!pending.has(id)) throw ApplicationFailure.nonRetryable(`No tool call ${id} is waiting for confirmation.`, FailureType.ConfirmationUnknown);
        if (decisions.has(id)) throw ApplicationFailure.nonRetryable(`Tool call ${id} was already decided.`, FailureType.ConfirmationUnknown);
      },
    },
  );

  setHandler(interruptSignal, (raw) => {
    if (!running) return;
    counters.interrupts += 1;
    interruptRunning(raw?.reason ?? 'interrupted by the user');
  });
  setHandler(endSessionSignal, () => {
    endRequested = true;
  });
  setHandler(waitForTurnUpdate, async ({ turnId }) => {
    const find = () => recentResults.find((r) => r.turnId === turnId);
    const knownTurn = (): boolean => running?.turnId === turnId || queue.some((q) => q.turnId === turnId) || find() !== undefined;
    if (!knownTurn()) throw ApplicationFailure.nonRetryable(`Turn ${turnId} is unknown to session ${sessionId}.`, FailureType.SessionInputInvalid);
    await condition(() => find() !== undefined);
    return find() as TurnResult;
  });

  const awaitDecision = async (confirmation: PendingConfirmation): Promise<Decision> => {
    pending.set(confirmation.toolCallId, confirmation);
    counters.confirmationsRequested += 1;
    events.emit({ type: 'confirmation_required', confirmation });
    const previous = activity;
    setActivity('awaiting_confirmation');
    try {
      const decision = await waitForDecision(() => decisions.get(confirmation.toolCallId), options.limits.confirmationTimeoutMs);
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
      if (pending.size === 0 && activity === 'awaiting_confirmation') setActivity(previous === 'awaiting_confirmation' ? 'running_tools' : previous);
    }
  };

  const runTurn = async (message: QueuedMessage): Promise<void> => {
    const scope = new CancellationScope();
    const turn: RunningTurn = { turnId: message.turnId, scope, step: 0 };
    running = turn;
    if (status !== 'active') setStatus('active');
    const systemPrompt: ChatMessage = { role: 'system', content: options.systemPrompt ?? DEFAULT_SYSTEM_PROMPT };
    const prefix: ChatMessage[] = [systemPrompt, ...window.flatMap((t) => t.messages)];
    const messages: ChatMessage[] = [{ role: 'user', content: message.text }];
    let outcome: TurnOutcome = 'completed';
    let text = '';
    let modelCalls = 0;
    let toolCalls = 0;
    let error: string | undefined;
    try {
      const result = await scope.run(() =>
        runReactTurn({
          sessionId,
          turnId: turn.turnId,
          options,
          events,
          prefix,
          messages,
          onStep: (step) => {
            turn.step = step;
          },
          onModelCall: () => {
            counters.modelCalls += 1;
            modelCalls += 1;
          },
          onToolCall: (ok) => {
            counters.toolCalls += 1;
            toolCalls += 1;
            if (!ok) counters.toolFailures += 1;
          },
          awaitDecision,
          setActivity,
        }),
      );
      text = result.text;
      if (result.hitStepLimit) {
        outcome = 'step_limit';
        messages.push({ role: 'assistant', content: text.split('\n\n').pop() ?? text });
        setActivity('idle', `step limit of ${options.limits.maxSteps} reached`);
      }
    } catch (err) {
      if (isCancellation(err)) {
        outcome = 'interrupted';
        const partial = events.streamedText(turn.turnId, turn.step);
        const kept = messages.filter((m) => m.role !== 'assistant' || !m.tool_calls);
        // Dangling tool calls without results would be rejected by the model API next turn.
        messages.splice(0, messages.length, ...kept.filter((m) => m.role !== 'tool'));
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
    const now = nowIso();
    window = [...window, { turnId: turn.turnId, messages, outcome, startedAt: message.receivedAt, endedAt: now }].slice(-MAX_WINDOW_TURNS);
    const result: TurnResult = { turnId: turn.turnId, outcome, text, modelCalls, toolCalls, error };
    recentResults.push(result);
    if (recentResults.length > RESULT_MEMORY) recentResults.shift();
    running = null;
    activity = 'idle';
    events.emit({ type: 'status_change', status, activity, turnId: turn.turnId, reason: outcome === 'interrupted' ? turn.interruptReason : outcome });
    events.emit({ type: 'turn_completed', turnId: turn.turnId, outcome, text, version });
    upsertMemo({ version, lastTurn: turn.turnId });
  };

  const historyTooLong = (): boolean =>
    workflowInfo().continueAsNewSuggested || workflowInfo().historyLength > options.limits.maxHistoryEvents;

  for (;;) {
    const woke = await condition(() => queue.length > 0 || endRequested, options.limits.idleTimeoutMs);
    const next = queue.shift();
    if (next) {
      await runTurn(next);
      if (historyTooLong()) {
        counters.continuedAsNew += 1;
        events.stream.detachPollers();
        await condition(allHandlersFinished);
        const continueAsNew = makeContinueAsNewFunc<typeof agentSession>();
        const state: CarriedState = {
          status,
          createdAt,
          version,
          turnSeq,
          window,
          counters,
          queue,
          processed: [...processed.entries()],
          recentResults,
          stream: events.stream.getState(),
        };
        return continueAsNew({ options: input.options, carried: state });
      }
      continue;
    }
    if (!woke || endRequested) break;
  }

  closing = true;
  await condition(allHandlersFinished);
  setStatus('archived', endRequested ? 'ended by request' : 'idle timeout');
  return { sessionId, status: 'archived', version, turns: counters.turns };
}
