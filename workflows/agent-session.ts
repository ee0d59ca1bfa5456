import { allHandlersFinished, condition, makeContinueAsNewFunc, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import { CarriedStateUnreadable, carriedStateProblem } from './carried-state-check';
import { IDLE_TIMER_OUTLIVES_TURNS, IdleDeadline } from './idle-deadline';
import { count } from './metrics';
import { SessionStatusKey } from './search-attributes';
import { describeZodError } from './input-guard';
import { notAuthorized } from './principal';
import { refuseStart, registerSessionHandlers } from './session-handlers';
import { ARCHIVED_STATUS_IN_ARCHIVE, archiveSession, ensureSearchAttributes, restoreFromArchive, snapshot } from './session-lifecycle';
import { SessionMemory } from './session-memory';
import { STATUS_SHOWS_APPROVALS, SessionRun } from './session-run';
import type { CarriedState } from './session-state';
import { foldEvicted, runTurn } from './session-turn';
import { SessionOptions, limitsOverMaxima, limitsWithinMaxima, optionsOverSizeBounds, type SessionOptionsInput } from './session-types';
import { inBaseline, isPatched, startPatchBaseline } from './patches';
import { CONTINUE_AFTER_POLL_BUDGET } from './waiting-budget';

export { SESSION_SETS_SEARCH_ATTRIBUTES } from './session-lifecycle';

export interface AgentSessionInput {
  options: SessionOptionsInput;
  /** Present after continue-as-new. `null` (what other SDKs send for a field left empty) counts as absent. */
  carried?: CarriedState | null;
}

export interface AgentSessionResult {
  sessionId: string;
  status: 'archived';
  version: number;
  turns: number;
  /** Set when another run wrote the archive first (concurrent restore); this run's archive was not written. */
  archiveConflict?: string;
}

/**
 * Patch id: events are published by the workflow only (activities signal
 * `textDeltas` and `toolProgress`); runs begun before keep the stream
 * library's publish signal until they continue as new.
 */
export const EVENTS_FROM_WORKFLOW_ONLY = inBaseline('events-from-workflow-only');

/**
 * Patch id: the session does not close while a message accepted in the same
 * activation is still on its way to the queue; it runs that turn first.
 * Consulted only when that happens, so other histories are unchanged.
 */
export const MESSAGE_ARRIVING_BEFORE_CLOSE = inBaseline('message-arriving-before-close');

/**
 * Patch id: a run started with a carried state the workflow cannot read (a
 * wrong type anywhere the code relies on one; workflows/carried-state-check.ts)
 * is refused with the field named, and one started with `carried: null` is
 * a fresh start that restores from the archive. Before, the first threw in
 * a workflow task, retried for ever, and the second skipped the archive.
 * Consulted only for such input, so other histories replay unchanged.
 */
export const CARRIED_STATE_CHECKED = inBaseline('carried-state-checked');

/**
 * Patch id: a new session whose limits are over their maxima
 * (`LIMIT_MAXIMA`) is refused with the limits named; one continuing a run
 * that took them before the maxima keeps going with them brought down to
 * the maxima. Before, a retention or confirmation time past what a date
 * holds threw in a workflow task, retried for ever. Consulted only for
 * such options, so other histories replay unchanged.
 */
export const SESSION_LIMITS_BOUNDED = 'session-limits-bounded';
/** A new run whose options are over OPTION_SIZE_BOUNDS is refused (asked only when they are). */
export const SESSION_OPTION_SIZES_BOUNDED = 'session-option-sizes-bounded';

/**
 * Patch id: a run whose history is past twice its budget (or 20 MB)
 * continues as new even with messages waiting; they go with it, as queued
 * messages always have. It waited for an empty queue, which a steady stream
 * of messages never leaves, until the server's own history limit failed the
 * run. Asked only then.
 */
export const CONTINUE_WITH_QUEUE = 'continue-with-queue';
/** History bytes and events past which a run continues as new with messages waiting (the server fails a run at 50 MB or 51,200 events). */
const HARD_HISTORY_BYTES = 20 * 1024 * 1024;
const HARD_HISTORY_EVENTS = 40_000;

/** The options a run starts with: as given, unless their limits are over the maxima (SESSION_LIMITS_BOUNDED). */
function boundedOptions(options: SessionOptions, continuing: boolean): SessionOptions {
  // Too large to carry: a new run is refused, naming the field; a continuing one keeps what it has (asked only when over).
  const tooLarge = continuing ? [] : optionsOverSizeBounds(options);
  if (tooLarge.length > 0 && isPatched(SESSION_OPTION_SIZES_BOUNDED)) refuseStart(`Invalid session options: ${tooLarge.join('; ')}.`);
  const over = limitsOverMaxima(options.limits);
  if (over.length === 0 || !isPatched(SESSION_LIMITS_BOUNDED)) return options;
  if (!continuing) refuseStart(`Invalid session options: ${over.join('; ')}.`);
  return { ...options, limits: limitsWithinMaxima(options.limits) };
}

/** The run's state, from the carried state when there is one; a carried state the run cannot read refuses the start. */
function startRun(options: SessionOptions, given: CarriedState | null | undefined): SessionRun {
  let carried = given;
  if (carried === null && isPatched(CARRIED_STATE_CHECKED)) carried = undefined;
  const problem = carriedStateProblem(carried);
  if (problem !== undefined && isPatched(CARRIED_STATE_CHECKED)) refuseStart(`Invalid carried state: ${problem}`);
  try {
    return new SessionRun(options, carried, !isPatched(EVENTS_FROM_WORKFLOW_ONLY));
  } catch (err) {
    // What the shape check cannot see (the event stream's encoded entries) is refused too; any other error is a bug,
    // and fails the task (retried once it is fixed) rather than the run.
    if (!(err instanceof CarriedStateUnreadable)) throw err;
    refuseStart(`Invalid carried state: ${err.message}.`);
  }
}

/**
 * One conversation session. Messages arrive as `sendMessage` updates and are
 * run one turn at a time through the ReAct loop; risky tool calls wait for
 * `decideToolCall`; `interrupt` cancels the running turn for real. Idle past
 * its timeout, the session archives itself to MongoDB and completes; the
 * next message starts a new run restored from that archive.
 *
 * This function is the run's lifecycle; handlers, turns, memory and the
 * archive live in the `session-*` modules beside it.
 */
export async function agentSession(input: AgentSessionInput): Promise<AgentSessionResult> {
  // Before any other patch is consulted: a new run takes the baseline's patches with one marker (workflows/patches.ts).
  startPatchBaseline();
  const parsed = SessionOptions.safeParse(input?.options);
  if (!parsed.success) refuseStart(`Invalid session options: ${describeZodError(parsed.error)}`);
  const options = boundedOptions(parsed.data, input?.carried !== undefined && input?.carried !== null);
  const { limits } = options;
  const run = startRun(options, input?.carried);
  const memory = new SessionMemory(run);
  registerSessionHandlers(run);

  await ensureSearchAttributes(run);
  await restoreFromArchive(run);

  // A run must stay under its history budget, so continue as new while one more turn still fits:
  // the headroom is the largest turn seen so far, plus margin for the continue-as-new itself.
  let largestTurnEvents = 0;
  const historyTooLong = (): boolean => {
    const info = workflowInfo();
    if (info.continueAsNewSuggested || info.historyLength + Math.ceil(largestTurnEvents * 1.5) + 20 > limits.maxHistoryEvents) return true;
    // Readers refused a poll meanwhile read by query; a new run lets them wait on polls again (asked only then).
    return run.events.pollBudgetSpent && isPatched(CONTINUE_AFTER_POLL_BUDGET);
  };

  const idle = new IdleDeadline(limits.idleTimeoutMs);
  for (;;) {
    const ready = () => run.queue.length > 0 || run.endRequested || (run.startRefused !== undefined && run.acceptedInRun === 0);
    const woke = isPatched(IDLE_TIMER_OUTLIVES_TURNS) ? await idle.wait(ready) : await condition(ready, limits.idleTimeoutMs);
    // Started by a message from someone other than the owner: nothing was accepted, the run fails (like invalid options).
    if (run.startRefused !== undefined && run.acceptedInRun === 0) throw notAuthorized(run.startRefused);
    const next = run.queue.shift();
    if (next) {
      const before = workflowInfo().historyLength;
      await runTurn(run, memory, next);
      await foldEvicted(run);
      largestTurnEvents = Math.max(largestTurnEvents, workflowInfo().historyLength - before);
      const pastHardLimit = (): boolean => {
        const info = workflowInfo();
        return info.historyLength > Math.min(2 * limits.maxHistoryEvents, HARD_HISTORY_EVENTS) || info.historySize > HARD_HISTORY_BYTES;
      };
      if (historyTooLong() && (run.queue.length === 0 || (pastHardLimit() && isPatched(CONTINUE_WITH_QUEUE)))) {
        await memory.settled();
        run.counters.continuedAsNew += 1;
        count('continuedAsNew');
        run.continuing = true;
        run.events.stream.detachPollers();
        await condition(allHandlersFinished);
        const carried = snapshot(run);
        // The options as parsed, not as given: fields the session does not know (another client's start may carry
        // megabytes of them) would go to every later run, beside a carried state that assumes the room.
        if (isPatched(STATUS_SHOWS_APPROVALS) && run.canUpsertStatus) {
          // The closed run no longer matches SessionStatus='active'; the next one starts with the real status.
          upsertSearchAttributes([{ key: SessionStatusKey, value: 'continued' }]);
          const continueAsNew = makeContinueAsNewFunc<typeof agentSession>({
            typedSearchAttributes: workflowInfo().typedSearchAttributes.updateCopy([{ key: SessionStatusKey, value: run.status }]),
          });
          return continueAsNew({ options: parsed.data, carried });
        }
        const continueAsNew = makeContinueAsNewFunc<typeof agentSession>();
        return continueAsNew({ options: parsed.data, carried });
      }
      continue;
    }
    if (!woke || run.endRequested) {
      // A message accepted in this same activation may still be on its way to the queue (its handler's
      // first await resumes it after this loop's wake-up): it runs before the session closes. Without this
      // an end request or the idle timeout seen first closed the run, and the handler waited for ever.
      if (run.arriving > 0 && isPatched(MESSAGE_ARRIVING_BEFORE_CLOSE)) {
        await condition(() => run.arriving === 0);
        continue;
      }
      break;
    }
  }

  run.closing = true;
  if (options.memory.enabled) memory.schedule('archive');
  await memory.settled();
  // Event readers long-poll through updates; detach them, or waiting for handlers would wait for the next event forever.
  run.events.stream.detachPollers();
  await condition(allHandlersFinished);
  const reason = run.endRequested ? 'ended by request' : 'idle timeout';
  // The last event says so before the archive is written, so the archive holds it and readers get it
  // from there (after archiving, readers are detached and the run is over).
  const announced = isPatched(ARCHIVED_STATUS_IN_ARCHIVE);
  if (announced) run.events.emit({ type: 'status_change', status: 'archived', activity: run.activity, turnId: run.running?.turnId, reason });
  const { archiveConflict } = await archiveSession(run);
  run.setStatus('archived', reason, { emit: !announced });
  return { sessionId: run.sessionId, status: 'archived', version: run.version, turns: run.counters.turns, ...(archiveConflict ? { archiveConflict } : {}) };
}
