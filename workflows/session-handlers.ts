import { ApplicationFailure, condition, log, setHandler } from '@temporalio/workflow';
import { FailureType } from './failure-types';
import { invalidInput, parseSignalInput, parseUpdateInput } from './input-guard';
import { registerInputHandlers } from './input-handlers';
import {
  answerInputUpdate,
  decideToolCallSignal,
  decideToolCallUpdate,
  endSessionSignal,
  getSessionQuery,
  getTurnQuery,
  interruptSignal,
  readEventsQuery,
  sendMessageUpdate,
  textDeltasSignal,
  toolProgressSignal,
  waitForTurnUpdate,
} from './messages';
import { actorOf, notAuthorized, refusalFor, type Principal, type SessionAction } from './principal';
import { signalGuard } from './principal-guard';
import { DEDUPE_MEMORY } from './session-state';
import { MEMO_VERSION_AT_TURN_END, type SessionRun } from './session-run';
import {
  DecideToolCallInput,
  EndSessionInput,
  InterruptInput,
  InterruptInputBefore,
  SendMessageInput,
  TextDeltasInput,
  ToolProgressInput,
  WaitForTurnInput,
  type SendMessageResult,
  type TurnResult,
} from './session-types';
import { nowIso } from './workflow-clock';
import { GetTurnInput, READ_EVENTS_MAX_BYTES, ReadEventsInput, type TurnState } from './session-queries';
import { MAX_WAITING_TURN_WAITS, tooManyWaiting } from './waiting-budget';
import { inBaseline, isPatched } from './patches';
import { payloadBytes } from './payload-budget';

/**
 * Patch id: a message sent again, waiting for a turn whose result the run no
 * longer keeps, is refused instead of waiting for ever (which also kept the
 * session from closing). Consulted only then.
 */
export const FORGOTTEN_TURN_RESULT = inBaseline('forgotten-turn-result');

/**
 * A session started with options that do not parse still answers the
 * update it was started with (update-with-start): every update is refused
 * with the options error, then the run fails with it. Without handlers the
 * caller would read "No registered handler for update" instead.
 */
export function refuseStart(message: string): never {
  const refuse = (): void => {
    throw invalidInput(message);
  };
  setHandler(sendMessageUpdate, (_input) => Promise.reject(invalidInput(message)), { validator: (_input) => refuse() });
  setHandler(decideToolCallUpdate, (_input) => Promise.reject(invalidInput(message)), { validator: (_input) => refuse() });
  setHandler(waitForTurnUpdate, (_input) => Promise.reject(invalidInput(message)), { validator: (_input) => refuse() });
  setHandler(answerInputUpdate, (_input) => Promise.reject(invalidInput(message)), { validator: (_input) => refuse() });
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

/**
 * Every message the session answers. Updates refuse bad input in their
 * validators, before anything is written; signals parse safely and ignore
 * (log, count) what does not parse or does not fit the session's state.
 */
/**
 * Patch id: message ids the session took before it was archived are
 * restored with it, so a retry after the close is the turn it was, not a
 * second one (its tool calls run again under new keys). Asked only when a
 * message comes under such an id.
 */
export const ARCHIVED_MESSAGE_IDS = 'archived-message-ids';

/** Messages that may wait for their turns at once. */
export const MAX_QUEUED_MESSAGES = 32;

/**
 * The most the queued messages' texts may weigh together, in bytes as written (UTF-8 JSON). Counted in characters
 * before, 32 messages of 30,000 Chinese characters passed (960,000 characters, 2.9 MB) and the carried state's last
 * cut, at continue-as-new, cut each to 16,000 characters: turns ran on text the user never saw cut.
 */
export const MAX_QUEUED_BYTES = 1_000_000;

/** Patch id: an interrupt naming a turn (`turnId`) stops that turn only. Asked only when a signal names one. */
export const INTERRUPT_FOR_NAMED_TURN = 'interrupt-for-named-turn';

/** Whether an interrupt signal's raw input names a turn (a null or absent `turnId` does not). */
function namesTurn(raw: unknown): boolean {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return false;
  const turnId = (raw as Record<string, unknown>).turnId;
  return turnId !== undefined && turnId !== null;
}

export function registerSessionHandlers(run: SessionRun): void {
  const { sessionId, options } = run;
  const ignore = (): void => run.ignoreSignal();
  /** Update validators: refuse a caller that may not act (validators do not run on replay, so no patch is needed). */
  const requireAllowed = (principal: Principal | undefined, action: SessionAction): void => {
    const refused = refusalFor(run.owner, principal, action);
    if (refused) throw notAuthorized(refused);
  };
  const signalAllowed = signalGuard(run);

  setHandler(getSessionQuery, () => run.view());
  setHandler(readEventsQuery, (raw) => {
    const { fromOffset, limit } = parseUpdateInput(ReadEventsInput, raw, 'readEvents', { strict: true });
    return { ...run.events.read(fromOffset, limit ?? 1_000, READ_EVENTS_MAX_BYTES), closing: run.closing || run.continuing };
  });
  setHandler(getTurnQuery, (raw): TurnState => {
    const { turnId } = parseUpdateInput(GetTurnInput, raw, 'getTurn', { strict: true });
    const result = run.findResult(turnId);
    if (result) return { turnId, state: 'finished', result };
    if (run.running?.turnId === turnId) return { turnId, state: 'running' };
    return { turnId, state: run.queue.some((q) => q.turnId === turnId) ? 'queued' : 'unknown' };
  });

  /** Calls waiting now for a turn to end; each holds one of the server's in-flight updates (waiting-budget.ts). */
  let waitingForTurns = 0;
  // The turn's own promise, as the handlers awaited before the counting (an extra await would move their completions).
  const waitedTurn = (turnId: string, acceptedVersion?: number): Promise<TurnResult> => {
    waitingForTurns += 1;
    const result = run.turnResult(turnId, acceptedVersion);
    result.then(
      () => void (waitingForTurns -= 1),
      () => void (waitingForTurns -= 1),
    );
    return result;
  };
  /** Validators: a call that would wait for a turn past the budget is refused before anything is accepted. */
  const requireTurnWaitRoom = (what: string): void => {
    if (waitingForTurns < MAX_WAITING_TURN_WAITS) return;
    throw tooManyWaiting(
      `Session ${sessionId} already has ${waitingForTurns} calls waiting for turns to end, at most ${MAX_WAITING_TURN_WAITS}: the rest of the server's in-flight updates are kept for messages and decisions. ${what}`,
    );
  };

  setHandler(
    sendMessageUpdate,
    async (raw): Promise<SendMessageResult> => {
      // Counted from the activation that accepted it until it is queued or answered: the session's loop
      // must not close the run on a message still on its way to the queue (agent-session.ts). Its first
      // `await` below resumes it a few microtasks after the loop's own wake-up, even when the condition
      // already holds. No await is added here: the handler's steps keep the timing they had.
      run.arriving += 1;
      let counted = true;
      const arrived = (): void => {
        if (!counted) return;
        counted = false;
        run.arriving -= 1;
      };
      try {
        // The validator has accepted it already; parsing again gives the typed value with defaults.
        const msg = parseUpdateInput(SendMessageInput, raw, 'sendMessage');
        // The first message of a restored session may arrive before the archive is read.
        await condition(() => run.restored);
        // Only now is the owner known for sure (the archive keeps it). Histories from before
        // `principal-required` carry no principal and were accepted: they still are.
        const refused = msg.principal ? refusalFor(run.owner, msg.principal, 'send') : undefined;
        if (refused) {
          // The message that started this run came from someone else: the run fails, like one started with invalid options.
          if (!run.carried && run.acceptedInRun === 0) run.startRefused = refused;
          throw notAuthorized(refused);
        }
        const archived = msg.clientMessageId ? run.archivedMessageIds.get(msg.clientMessageId) : undefined;
        // A retry of a message the session took before it was archived (its answer lost as it closed) is that turn.
        const seen = msg.clientMessageId ? (run.processed.get(msg.clientMessageId) ?? (archived && isPatched(ARCHIVED_MESSAGE_IDS) ? archived : undefined)) : undefined;
        if (seen) {
          arrived();
          // Its result may be gone (the run keeps the last RESULT_MEMORY): waiting for it would never end, and a
          // handler that never ends keeps the session from closing.
          if (msg.waitForTurn && !run.knownTurn(seen.turnId) && isPatched(FORGOTTEN_TURN_RESULT)) {
            throw invalidInput(`Message ${msg.clientMessageId} was handled as ${seen.turnId} (version ${seen.version}), whose result this session no longer keeps; read its answer from the session's events.`);
          }
          return msg.waitForTurn ? { ...seen, turn: await waitedTurn(seen.turnId, seen.version) } : seen;
        }
        if (msg.expectedVersion !== undefined && msg.expectedVersion !== run.version) throw versionConflict(sessionId, run.version, msg.expectedVersion);
        run.version += 1;
        run.turnSeq += 1;
        const result: SendMessageResult = { turnId: `turn-${run.turnSeq}`, version: run.version };
        if (msg.clientMessageId) {
          run.processed.set(msg.clientMessageId, result);
          if (run.processed.size > DEDUPE_MEMORY) run.processed.delete(run.processed.keys().next().value as string);
        }
        run.acceptedInRun += 1;
        run.queue.push({
          turnId: result.turnId,
          text: msg.text,
          clientMessageId: msg.clientMessageId,
          receivedAt: nowIso(),
          ...(msg.principal ? { by: actorOf(msg.principal) } : {}),
        });
        arrived();
        // Runs from before the patch also wrote the memo here; the turn this message starts writes it when it ends.
        if (!isPatched(MEMO_VERSION_AT_TURN_END)) run.noteVersion();
        if (run.running && options.busyPolicy === 'interrupt') run.interruptRunning('a new message arrived');
        return msg.waitForTurn ? { ...result, turn: await waitedTurn(result.turnId, result.version) } : result;
      } finally {
        arrived();
      }
    },
    {
      validator: (raw) => {
        const msg = parseUpdateInput(SendMessageInput, raw, 'sendMessage', { strict: true });
        // Before the archive is read the owner may still change: the handler checks then.
        if (run.restored) requireAllowed(msg.principal, 'send');
        else if (!msg.principal) requireAllowed(undefined, 'send');
        if (msg.waitForTurn) requireTurnWaitRoom('Nothing was accepted: send the message without waitForTurn, and read its result with the getTurn query or its turn_completed event.');
        // A repeat of a message the session took (in this run, or before it was archived) is answered as it was.
        if (msg.clientMessageId && (run.processed.has(msg.clientMessageId) || run.archivedMessageIds.has(msg.clientMessageId))) return;
        // Each accepted message is written to history, and the queue is carried whole: a client that sends
        // faster than turns run would take the run past the server's history limits, which fails it.
        const bytes = run.queue.reduce((sum, q) => sum + payloadBytes(q.text), 0);
        if (run.queue.length >= MAX_QUEUED_MESSAGES || bytes + payloadBytes(msg.text) > MAX_QUEUED_BYTES) {
          throw ApplicationFailure.nonRetryable(
            `Session ${sessionId} has ${run.queue.length} messages (${bytes} bytes) waiting for their turns, at most ${MAX_QUEUED_MESSAGES} (${MAX_QUEUED_BYTES} bytes with this one); send this one again once some have run.`,
            FailureType.SessionBusy,
          );
        }
        if (run.closing || run.status === 'expired') {
          const why = run.closing
            ? 'closing (its archive is being written); send the message again shortly: once this run has closed, it starts a new one that restores the session'
            : `${run.status}; send the message again to start it anew`;
          throw ApplicationFailure.nonRetryable(`Session ${sessionId} is ${why}.`, FailureType.SessionClosed);
        }
        if (run.restored && msg.expectedVersion !== undefined && msg.expectedVersion !== run.version) {
          throw versionConflict(sessionId, run.version, msg.expectedVersion);
        }
      },
    },
  );

  /** The call waiting under the decision's id is another request than the one it names (a confirmationId given). */
  const otherRequest = (decision: DecideToolCallInput): boolean =>
    decision.confirmationId !== undefined && run.pending.get(decision.toolCallId)?.confirmationId !== decision.confirmationId;

  const decide = (decision: DecideToolCallInput, via: 'signal' | 'update'): void => {
    if (via === 'signal' && !signalAllowed(decision.principal, 'decide', 'decideToolCall')) return;
    if (!run.pending.has(decision.toolCallId) || run.decisions.has(decision.toolCallId)) {
      log.warn('Ignoring a decision for an unknown or decided tool call', { toolCallId: decision.toolCallId, via });
      if (via === 'signal') ignore();
      return;
    }
    if (otherRequest(decision)) {
      log.warn('Ignoring a decision for another request under the same tool call id', { toolCallId: decision.toolCallId, via });
      if (via === 'signal') ignore();
      return;
    }
    run.decisions.set(decision.toolCallId, {
      approved: decision.approved,
      reason: decision.reason,
      decidedBy: 'user',
      ...(decision.principal ? { by: actorOf(decision.principal) } : {}),
    });
  };
  setHandler(decideToolCallSignal, (raw) => {
    const decision = parseSignalInput(DecideToolCallInput, raw, 'decideToolCall', ignore, { fromPeople: true });
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
        const decision = parseUpdateInput(DecideToolCallInput, raw, 'decideToolCall', { strict: true });
        const { toolCallId: id, principal } = decision;
        requireAllowed(principal, 'decide');
        if (!run.pending.has(id)) throw ApplicationFailure.nonRetryable(`No tool call ${id} is waiting for confirmation.`, FailureType.ConfirmationUnknown);
        if (run.decisions.has(id)) throw ApplicationFailure.nonRetryable(`Tool call ${id} was already decided.`, FailureType.ConfirmationUnknown);
        if (otherRequest(decision)) {
          throw ApplicationFailure.nonRetryable(
            `Tool call ${id} waiting for confirmation now is another request than ${decision.confirmationId} (the model used the id again); read the pending call and decide it by its own confirmationId.`,
            FailureType.ConfirmationUnknown,
          );
        }
      },
    },
  );

  setHandler(interruptSignal, (raw) => {
    // A Stop that names its turn stops that turn only: one that lands after it ended (or after a new message replaced
    // it) leaves the next turn alone. Runs from before read `turnId` as a field the signal does not have (asked only
    // when one is sent).
    const forTurn = namesTurn(raw) && isPatched(INTERRUPT_FOR_NAMED_TURN);
    const input = parseSignalInput(forTurn ? InterruptInput : InterruptInputBefore, raw, 'interrupt', ignore, { fromPeople: true });
    if (!input || !signalAllowed(input.principal, 'interrupt', 'interrupt') || !run.running) return;
    if (forTurn && 'turnId' in input && input.turnId !== run.running.turnId) return;
    run.counters.interrupts += 1;
    run.interruptRunning(input.reason ?? 'interrupted by the user');
  });
  setHandler(endSessionSignal, (raw) => {
    const input = parseSignalInput(EndSessionInput, raw, 'endSession', ignore, { fromPeople: true });
    if (input && signalAllowed(input.principal, 'end', 'endSession')) run.endRequested = true;
  });
  setHandler(waitForTurnUpdate, async (raw) => waitedTurn(parseUpdateInput(WaitForTurnInput, raw, 'waitForTurn').turnId), {
    validator: (raw) => {
      const { turnId, principal } = parseUpdateInput(WaitForTurnInput, raw, 'waitForTurn', { strict: true });
      requireAllowed(principal, 'wait');
      if (!run.knownTurn(turnId)) throw invalidInput(`Turn ${turnId} is unknown to session ${sessionId}.`);
      // A finished turn answers at once: only a wait that would hold a slot is counted against the budget.
      if (!run.findResult(turnId)) requireTurnWaitRoom(`Read turn ${turnId}'s result with the getTurn query, or its turn_completed event.`);
    },
  });

  setHandler(textDeltasSignal, (raw) => {
    const input = parseSignalInput(TextDeltasInput, raw, 'textDeltas', ignore);
    if (!input) return;
    const refused = run.deltaGate.admit(input, run.running);
    if (refused) {
      log.warn(`Ignoring text deltas: ${refused}`);
      ignore();
      return;
    }
    for (const { delta } of input.deltas) run.events.emit({ type: 'text_delta', turnId: input.turnId, step: input.step, attempt: input.attempt, delta });
  });
  setHandler(toolProgressSignal, (raw) => {
    const input = parseSignalInput(ToolProgressInput, raw, 'toolProgress', ignore);
    if (!input) return;
    const call = run.progressGate.admit(input);
    if (typeof call === 'string') {
      log.warn(`Ignoring tool progress: ${call}`);
      ignore();
      return;
    }
    const { turnId, toolCallId, progress, total, message } = input;
    run.events.emit({ type: 'tool_call_progress', turnId, toolCallId, ...call, progress, total, message });
  });
  registerInputHandlers(run);
}
