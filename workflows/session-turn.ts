import { ActivityFailure, CancellationScope, TemporalFailure, TimeoutFailure, isCancellation, log, proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import { fitTurnsInput } from './carried-state-budget';
import type { BudgetAllowance } from '../activities/usage/budgets';
import type { UsageActivities } from '../activities/usage/usage-activities';
import type { SessionActivities } from '../activities/activity-types';
import type { ToolCatalog } from './tool-spec';
import type { ChatMessage, ToolMessage } from './chat-message';
import { DEFAULT_SYSTEM_PROMPT } from './default-system-prompt';
import { FailureType } from './failure-types';
import { shouldExtractNow } from './memory-events';
import { INTERRUPT_KEEPS_RAN_CALLS, ModelCallFailed, catalogRead, readCatalog, runReactTurn, waitForDecision, type Decision, type TurnBudget, type TurnCatalogs } from './react-turn';
import type { SessionMemory } from './session-memory';
import type { RunningTurn, SessionRun } from './session-run';
import { FOLD_BACKOFF, MAX_FOLD_SKIP, RESULT_MEMORY, UNFOLDED_CAP, TOOL_RECORD_MEMORY, type QueuedMessage } from './session-state';
import type { PendingConfirmation, Turn, TurnOutcome, TurnResult } from './session-types';
import { count, observe } from './metrics';
import { MAX_SUMMARY_NOTES } from './session-summary';
import { nowIso, nowMs } from './workflow-clock';
import { inBaseline, isPatched } from './patches';

const TURN_READ_OPTIONS = {
  startToCloseTimeout: '10 seconds',
  retry: { maximumAttempts: 3, initialInterval: '200 milliseconds' },
} as const;
const { checkBudget } = proxyLocalActivities<UsageActivities>(TURN_READ_OPTIONS);
const { readTurnStart } = proxyLocalActivities<SessionActivities>(TURN_READ_OPTIONS);

/**
 * Patch id: each turn starts by reading what its tenant and user may still
 * spend today (BUDGETS), and stops before a model call once that is spent.
 */

/** The `tool` label of a rejected call to a tool no catalog offered to the session held. */
export const UNKNOWN_TOOL_LABEL = '(unknown)';
/** The same, for a name outside the session's allow-list (which may or may not be a real tool). */
export const NOT_ALLOWED_TOOL_LABEL = '(not allowed)';
export const BUDGET_CHECK = inBaseline('budget-check');

/**
 * Patch id: a turn starts its three reads (the day's budget, the memories
 * recalled for the message, the tool catalog) at once and waits for all of
 * them, instead of one after another: the turn waits for the slowest read,
 * not for their sum (docs/performance.md).
 */
export const TURN_START_TOGETHER = inBaseline('turn-start-together');

/**
 * Patch id: the tool catalog and the day's budget are read in one local
 * activity (`readTurnStart`) instead of two. Each local activity is a task
 * to the worker and an activation of its own for the result; where both
 * reads answer from memory, that was about 1 ms of every turn
 * (docs/performance.md). The recall stays apart and runs beside it.
 */
export const TURN_READS_IN_ONE = 'turn-reads-in-one';

/**
 * Patch id: a read the turn starts with (the day's budget, the tool catalog)
 * that still fails after its retries ends the turn as `failed`, with an
 * `error` event, and the session goes on. Before, the failure left the
 * workflow and failed the run, losing what it held since its last archive.
 * Asked only once a read has failed, so a run records the marker only then.
 */
export const TURN_READ_FAILURE_ENDS_TURN = 'turn-read-failure-ends-turn';

/**
 * Patch id: an interrupted answer keeps the text of the model call's newest
 * attempt only. Before, a failed attempt's streamed text (on the stream,
 * marked by attempt) was joined to the retry's: "Hello worHello world".
 * Asked only when attempts are mixed, so other histories replay unchanged.
 */
export const INTERRUPTED_TEXT_NEWEST_ATTEMPT = 'interrupted-text-newest-attempt';

/** A read the turn starts with failed; the turn ends as failed with this type and message. */
export class TurnReadFailed extends Error {
  readonly errorType = FailureType.TurnReadFailed;
}

/**
 * Awaits a turn-start read (`what` names it in the error). In runs with the
 * patch, its failure becomes a TurnReadFailed; a cancellation, and every
 * failure in runs without the patch, passes through as it was.
 */
function turnRead<T>(what: string, read: Promise<T>): Promise<T> {
  return read.catch((err: unknown) => {
    if (isCancellation(err) || !(err instanceof TemporalFailure) || !isPatched(TURN_READ_FAILURE_ENDS_TURN)) throw err;
    // A local activity's failure may arrive wrapped in an ActivityFailure or as the bare cause.
    const cause = err instanceof ActivityFailure && err.cause ? err.cause : err;
    const why = cause instanceof TimeoutFailure ? 'it did not answer in time' : cause.message.slice(0, 300);
    throw new TurnReadFailed(`The turn could not start: reading ${what} failed (${why}). No model call was made and the session goes on: send the message again.`);
  });
}

/**
 * Both results, once both have settled: a read that fails does not end the
 * turn while the other still runs (a recall would then emit its events
 * after the turn's end). The first failure, in argument order, is thrown.
 */
async function bothSettled<A, B>(a: Promise<A>, b: Promise<B>): Promise<[A, B]> {
  const [x, y] = await Promise.allSettled([a, b]);
  if (x.status === 'rejected') throw x.reason;
  if (y.status === 'rejected') throw y.reason;
  return [x.value, y.value];
}

/** The day's allowance as a turn spends it: tokens and, with a price, cost. */
function turnBudget(allowance: BudgetAllowance): TurnBudget {
  let tokens = allowance.tokens;
  let cost = allowance.cost;
  return {
    exhausted() {
      if (tokens !== undefined && tokens <= 0) return `the daily token budget is spent (${allowance.tokensFrom})`;
      if (cost !== undefined && cost <= 0) return `the daily cost budget is spent (${allowance.costFrom})`;
      return undefined;
    },
    spend(usage) {
      if (!usage) return;
      if (tokens !== undefined) tokens -= usage.promptTokens + usage.completionTokens;
      if (cost !== undefined && allowance.price) cost -= (usage.promptTokens * allowance.price.inputPerMillion + usage.completionTokens * allowance.price.outputPerMillion) / 1_000_000;
    },
  };
}

const { summarizeTurns } = proxyActivities<SessionActivities>({
  startToCloseTimeout: '2 minutes',
  retry: { maximumAttempts: 3, initialInterval: '1 second', nonRetryableErrorTypes: [FailureType.ModelRequestInvalid, FailureType.ModelAuthFailed] },
});

/** Holds a risky call until a person decides, the confirmation times out, or the turn is interrupted. */
async function awaitDecision(run: SessionRun, confirmation: PendingConfirmation): Promise<Decision> {
  const { events } = run;
  run.pending.set(confirmation.toolCallId, confirmation);
  run.counters.confirmationsRequested += 1;
  events.emit({ type: 'confirmation_required', confirmation });
  run.setActivity('awaiting_confirmation');
  run.notePendingApprovals();
  const waitStarted = nowMs();
  try {
    const decision = await waitForDecision(() => run.decisions.get(confirmation.toolCallId), run.options.limits.confirmationTimeoutMs);
    count('confirmations', { decision: decision.approved ? 'approved' : 'denied', decided_by: decision.decidedBy });
    observe('confirmationWait', (nowMs() - waitStarted) / 1000);
    events.emit({
      type: 'confirmation_decided',
      toolCallId: confirmation.toolCallId,
      approved: decision.approved,
      reason: decision.reason,
      decidedBy: decision.decidedBy,
      ...(decision.by ? { principal: decision.by } : {}),
    });
    return decision;
  } catch (err) {
    if (isCancellation(err)) {
      count('confirmations', { decision: 'denied', decided_by: 'interrupt' });
      observe('confirmationWait', (nowMs() - waitStarted) / 1000);
      events.emit({ type: 'confirmation_decided', toolCallId: confirmation.toolCallId, approved: false, decidedBy: 'interrupt' });
    }
    throw err;
  } finally {
    run.pending.delete(confirmation.toolCallId);
    run.decisions.delete(confirmation.toolCallId);
    run.notePendingApprovals();
    if (run.pending.size === 0 && run.activity === 'awaiting_confirmation') run.setActivity('running_tools');
  }
}

/**
 * Runs one queued message as a turn: recall, the ReAct loop in its own
 * cancellation scope (an interrupt cancels it), then the turn's record,
 * its result for waiting callers and `turn_completed`.
 */
export async function runTurn(run: SessionRun, memory: SessionMemory, message: QueuedMessage): Promise<void> {
  const { options, events, counters } = run;
  const turn: RunningTurn = { turnId: message.turnId, scope: new CancellationScope(), step: 0 };
  run.running = turn;
  if (run.status !== 'active') run.setStatus('active');
  const messages: ChatMessage[] = [{ role: 'user', content: message.text }];
  let outcome: TurnOutcome = 'completed';
  let text = '';
  let modelCalls = 0;
  let modelAttempts = 0;
  let toolCalls = 0;
  let error: string | undefined;
  try {
    const catalogs: TurnCatalogs = {
      held: (allow) => (run.heldCatalog?.allow === allow ? run.heldCatalog.catalog : undefined),
      hold: (allow, catalog) => {
        run.heldCatalog = { allow, catalog };
      },
    };
    const result = await turn.scope.run(async () => {
      const together = isPatched(TURN_START_TOGETHER);
      const budget = isPatched(BUDGET_CHECK) ? { tenant: options.namespace.tenant, user: options.namespace.user, model: options.model.name ?? '' } : undefined;
      let allowance: BudgetAllowance | null;
      let recalled: Awaited<ReturnType<SessionMemory['recall']>>;
      let catalog: Promise<ToolCatalog> | undefined;
      if (together && isPatched(TURN_READS_IN_ONE)) {
        // The catalog and the budget in one local activity, beside the recall.
        const read = catalogRead({ sessionId: run.sessionId, options, catalogs });
        const reads = turnRead("the day's budget and the tool catalog", readTurnStart({ catalog: read.input, ...(budget ? { budget } : {}) }));
        const [both, memories] = await bothSettled(reads, memory.recall(turn.turnId, message.text));
        allowance = both.allowance;
        recalled = memories;
        catalog = Promise.resolve(read.settle(both.catalog));
      } else if (together) {
        const budgetRead = budget ? turnRead("the day's budget", checkBudget(budget)) : null;
        // All three scheduled in this activation. Promise.all handles every rejection, the ones after the first included.
        catalog = turnRead('the tool catalog', readCatalog({ sessionId: run.sessionId, options, catalogs }));
        [allowance, recalled] = await Promise.all([budgetRead, memory.recall(turn.turnId, message.text), catalog]);
      } else {
        const budgetRead = budget ? turnRead("the day's budget", checkBudget(budget)) : null;
        allowance = await budgetRead;
        recalled = await memory.recall(turn.turnId, message.text);
      }
      const prefix = run.context.prompt(options.systemPrompt ?? DEFAULT_SYSTEM_PROMPT, [], recalled.lines);
      observe('contextShare', run.context.pinnedShare([...prefix, ...messages]));
      return runReactTurn({
        sessionId: run.sessionId,
        turnId: turn.turnId,
        options,
        events,
        prefix,
        messages,
        citations:
          options.memory.enabled && options.memory.citationCheck
            ? {
                injectedIds: recalled.injectedIds,
                onFlag: (unknownIds, action) => {
                  count('citationChecks', { action });
                  if (action === 'regenerated') counters.citationsRegenerated += 1;
                  else counters.citationsFlagged += 1;
                  events.emit({ type: 'citation_flagged', turnId: turn.turnId, unknownIds, action });
                },
              }
            : undefined,
        toolHashes: run.toolHashes,
        prompts: run.prompts,
        catalogs,
        ...(catalog ? { catalog } : {}),
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
        progress: run.progressGate,
        publishDeltas: (step, attempt, deltas) => {
          run.deltaGate.close(turn.turnId, step, attempt);
          for (const delta of deltas) events.emit({ type: 'text_delta', turnId: turn.turnId, step, attempt, delta });
        },
        onToolCall: ({ errorType, ...record }) => {
          counters.toolCalls += 1;
          toolCalls += 1;
          if (record.status !== 'ok') counters.toolFailures += 1;
          const status = errorType === FailureType.ToolTimeout ? 'timeout' : record.status;
          // A name no catalog of this session held is the model's invention: one label for all of them, or each
          // invented name would be a metric series for ever.
          const unseen = record.status === 'rejected' && run.toolHashes.hashOf(record.toolName) === undefined;
          const tool = !unseen ? record.toolName : errorType === FailureType.ToolNotAllowed ? NOT_ALLOWED_TOOL_LABEL : UNKNOWN_TOOL_LABEL;
          count('toolCalls', { tool, status });
          if (record.status === 'ok' || record.status === 'failed') observe('toolSeconds', record.durationMs / 1000, { tool: record.toolName });
          run.toolRecords = [...run.toolRecords, { ...record, turnId: turn.turnId }].slice(-TOOL_RECORD_MEMORY);
        },
        awaitDecision: (confirmation) => awaitDecision(run, confirmation),
        decisionsPending: () => run.pending.size,
        ...(allowance ? { budget: turnBudget(allowance) } : {}),
        setActivity: (next) => run.setActivity(next),
      });
    });
    text = result.text;
    if (result.budgetExceeded) {
      outcome = 'budget_exceeded';
      error = `${FailureType.BudgetExceeded}: ${result.budgetExceeded}`;
      const note = `[stopped: ${result.budgetExceeded}]`;
      text = text ? `${text}\n\n${note}` : note;
      messages.push({ role: 'assistant', content: note });
      events.emit({ type: 'error', turnId: turn.turnId, errorType: FailureType.BudgetExceeded, message: `This turn stopped before its next model call: ${result.budgetExceeded}. It resumes tomorrow (UTC) or when the budget is raised.` });
    } else if (result.hitStepLimit) {
      outcome = 'step_limit';
      messages.push({ role: 'assistant', content: text.split('\n\n').pop() ?? text });
      run.setActivity('idle', `step limit of ${options.limits.maxSteps} reached`);
    }
  } catch (err) {
    if (isCancellation(err)) {
      outcome = 'interrupted';
      const partial = events.streamedText(turn.turnId, turn.step, () => isPatched(INTERRUPTED_TEXT_NEWEST_ATTEMPT));
      // Tool calls without results would be rejected by the model API next turn. Runs from before the patch kept the
      // text only, losing calls that had run; from it on, every call that has its results stays (react-turn.ts).
      const kept = isPatched(INTERRUPT_KEEPS_RAN_CALLS) ? withAnsweredCalls(messages) : messages.filter((m) => m.role === 'user' || (m.role === 'assistant' && !m.tool_calls));
      messages.splice(0, messages.length, ...kept);
      text = partial;
      messages.push({ role: 'assistant', content: `${partial}${partial ? ' ' : ''}[interrupted: ${turn.interruptReason ?? 'interrupted'}]` });
    } else if (err instanceof ModelCallFailed || err instanceof TurnReadFailed) {
      outcome = 'failed';
      error = `${err.errorType}: ${err.message}`;
      events.emit({ type: 'error', turnId: turn.turnId, errorType: err.errorType, message: err.message });
    } else {
      throw err;
    }
  }
  counters.turns += 1;
  count('turns', { outcome });
  observe('stepsPerTurn', turn.step);
  const by = message.by ? { by: message.by } : {};
  const finished: Turn = { turnId: turn.turnId, messages, outcome, startedAt: message.receivedAt, endedAt: nowIso(), ...by };
  run.context.addTurn(finished);
  observe('windowTurns', run.context.windowTurns);
  memory.afterTurn(finished, () => shouldExtractNow(message.text));
  const result: TurnResult = { turnId: turn.turnId, outcome, text, modelCalls, modelAttempts, toolCalls, error, ...by };
  run.recentResults.push(result);
  if (run.recentResults.length > RESULT_MEMORY) run.recentResults.shift();
  run.running = null;
  run.activity = 'idle';
  run.emitStatus(outcome === 'interrupted' ? turn.interruptReason : outcome);
  events.emit({ type: 'turn_completed', turnId: turn.turnId, outcome, text, version: run.version });
  run.noteVersion({ lastTurn: turn.turnId });
}

/**
 * The turn's messages without a step whose calls lack results: an assistant message with tool calls stays, with the
 * tool messages that follow it, only when every one of its calls has its result there (ids may repeat across steps,
 * so results are matched within their step).
 */
export function withAnsweredCalls(messages: readonly ChatMessage[]): ChatMessage[] {
  const kept: ChatMessage[] = [];
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    if (m.role === 'tool') continue; // Kept with its step, below; one outside a step has no call to answer.
    if (m.role !== 'assistant' || !m.tool_calls?.length) {
      kept.push(m);
      continue;
    }
    let end = i + 1;
    while (end < messages.length && messages[end]!.role === 'tool') end++;
    const results = messages.slice(i + 1, end) as ToolMessage[];
    const answered = new Set(results.map((r) => r.tool_call_id));
    if (m.tool_calls.every((c) => answered.has(c.id))) kept.push(m, ...results);
    i = end - 1;
  }
  return kept;
}

/**
 * Folds evicted turns into the summary; on failure they stay raw in the
 * prompt and the fold is tried again after the next turn, or after more
 * turns when it keeps failing (`FOLD_BACKOFF`).
 */
export async function foldEvicted(run: SessionRun): Promise<void> {
  const { context, counters } = run;
  const turns = context.pendingFold();
  if (turns.length === 0) return;
  if (run.foldBackoff.skip > 0) {
    run.foldBackoff.skip -= 1;
    capUnfolded(run);
    return;
  }
  const namespace = { tenant: run.options.namespace.tenant, user: run.options.namespace.user };
  // Whose tokens the fold spends (usage, budgets); an added input field, so recorded folds still replay.
  const inputOf = (evicted: Turn[]) => ({ sessionId: run.sessionId, namespace, previous: context.summary, evicted });
  const fitted = fitTurnsInput(turns, inputOf);
  if (fitted.dropped.length > 0) log.warn(`The turns to fold were too large for one activity input; left out: ${fitted.dropped.join(', ')}`);
  try {
    const summary = await summarizeTurns.executeWithOptions(
      {
        startToCloseTimeout: '2 minutes',
        retry: { maximumAttempts: 3, initialInterval: '1 second', nonRetryableErrorTypes: [FailureType.ModelRequestInvalid, FailureType.ModelAuthFailed] },
        summary: `fold ${turns.length} turns into the summary`,
      },
      [inputOf(fitted.turns)],
    );
    context.folded(turns, summary);
    run.foldBackoff = { failures: 0, skip: 0 };
    counters.summariesFolded += 1;
    count('summaryFolds', { result: 'ok' });
  } catch (err) {
    if (!(err instanceof ActivityFailure)) throw err;
    counters.summaryFailures += 1;
    count('summaryFolds', { result: 'failed' });
    const failures = run.foldBackoff.failures + 1;
    // Only a failure consults the patch, so only histories with one carry its marker.
    const skip = isPatched(FOLD_BACKOFF) ? Math.min(2 ** (failures - 1) - 1, MAX_FOLD_SKIP) : 0;
    run.foldBackoff = { failures, skip };
    const when = skip === 0 ? 'after the next turn' : `after ${skip + 1} more turns (${failures} failures in a row)`;
    run.events.emit({
      type: 'error',
      errorType: 'SummaryFailed',
      message: `Could not fold ${turns.length} turns into the summary (${err.cause?.message ?? err.message}); they stay in the prompt verbatim, up to the window's token budget, and the fold is retried ${when}.`,
    });
    capUnfolded(run);
  }
}

/**
 * While folds fail, turns waiting for one stay raw in the prompt; past the
 * window's token budget the oldest become a line each in the summary's
 * notes (SessionContext.capUnfolded), so a summarizer that never recovers
 * cannot grow every prompt and the carried state without end. The patch is
 * consulted only when there is something to compact.
 */
function capUnfolded(run: SessionRun): void {
  if (!run.context.unfoldedOverBudget || !isPatched(UNFOLDED_CAP)) return;
  const { turns, noted } = run.context.capUnfolded();
  run.counters.turnsCompacted += turns.length;
  count('summaryFolds', { result: 'compacted' });
  const kept = noted === turns.length ? 'each is now one line' : `${noted} of them are now one line each (the notes hold ${MAX_SUMMARY_NOTES})`;
  run.events.emit({
    type: 'error',
    errorType: 'TurnsCompacted',
    message: `${turns.length} turn(s) waiting for a summary fold went past the window's token budget: ${kept} in the summary's notes instead of their full text in the prompt.`,
  });
}
