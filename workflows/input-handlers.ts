import { ApplicationFailure, condition, log, setHandler } from '@temporalio/workflow';
import { FailureType } from './failure-types';
import { parseSignalInput, parseUpdateInput, invalidInput } from './input-guard';
import { AnswerInputInput, GetInputInput, InputRequestedInput, checkAnswer, elicitationSchemaProblem, type InputState, type PendingInput } from './input-request';
import { answerInputSignal, answerInputUpdate, getInputQuery, inputRequestedSignal } from './messages';
import { notAuthorized, refusalFor } from './principal';
import { signalGuard } from './principal-guard';
import type { SessionRun } from './session-run';
import { isPatched, RUNNING_TOOLS_AFTER_LAST_DECISION } from './patches';
import { nowMs } from './workflow-clock';

/**
 * Patch id: a question whose schema holds what MCP does not allow in
 * elicitation (references, combinators, other formats: a check of the answer
 * that could take exponential time in this workflow) is ignored. Asked only
 * for such a schema.
 */
export const ELICITATION_SCHEMA_FLAT = 'elicitation-schema-flat';

/**
 * Elicitation: a server asks the user for input in the middle of a tool call.
 * The question is held in the session like a confirmation (an event, a
 * timer, an answer by signal or update from any client); the tool activity
 * polls `getInput` for the answer. Handlers are registered with the others.
 */
export function registerInputHandlers(run: SessionRun): void {
  const ignore = (): void => run.ignoreSignal();
  const signalAllowed = signalGuard(run);

  setHandler(getInputQuery, (raw): InputState => {
    const parsed = GetInputInput.safeParse(raw);
    return parsed.success ? run.inputs.state(parsed.data.inputId) : { state: 'unknown' };
  });

  setHandler(inputRequestedSignal, async (raw) => {
    const input = parseSignalInput(InputRequestedInput, raw, 'inputRequested', ignore);
    if (!input) return;
    const call = run.progressGate.call(input.toolCallId);
    if (!call || call.turnId !== input.turnId) {
      log.warn('Ignoring an input request for a tool call that is not running', { toolCallId: input.toolCallId, inputId: input.inputId });
      ignore();
      return;
    }
    if (!input.inputId.startsWith(`${input.toolCallId}:`)) {
      log.warn('Ignoring an input request whose id is not of its tool call', { toolCallId: input.toolCallId, inputId: input.inputId });
      ignore();
      return;
    }
    // A retried attempt of the same call asks again: the question stands, or is answered already.
    if (run.inputs.has(input.inputId)) return;
    const unflat = elicitationSchemaProblem(input.requestedSchema);
    if (unflat && isPatched(ELICITATION_SCHEMA_FLAT)) {
      // Answers are checked against the schema in this workflow: one whose check is costly would freeze it.
      log.warn(`Ignoring an input request: ${unflat}`, { inputId: input.inputId });
      ignore();
      return;
    }
    const now = nowMs();
    const waitMs = Math.min(run.options.limits.confirmationTimeoutMs, input.waitMs);
    const pending: PendingInput = {
      inputId: input.inputId,
      turnId: input.turnId,
      toolCallId: input.toolCallId,
      toolName: call.toolName,
      server: input.server,
      message: input.message,
      requestedSchema: input.requestedSchema,
      requestedAt: new Date(now).toISOString(),
      expiresAt: new Date(now + waitMs).toISOString(),
    };
    if (!run.inputs.add(pending, call.step)) {
      log.warn('Ignoring an input request: too many inputs open', { inputId: input.inputId });
      ignore();
      return;
    }
    run.counters.inputsRequested += 1;
    run.events.emit({ type: 'input_required', input: pending });
    run.setActivity('awaiting_input');
    const answered = await condition(() => run.inputs.settled(pending.inputId), waitMs);
    if (!run.inputs.answered(pending.inputId)) {
      // Nobody answered in time (the server is told `cancel`), or the call ended first.
      const answeredBy = answered ? 'call_ended' : 'timeout';
      run.inputs.answer(pending.inputId, { action: 'cancel', answeredBy });
      run.events.emit({ type: 'input_answered', turnId: pending.turnId, inputId: pending.inputId, toolCallId: pending.toolCallId, action: 'cancel', answeredBy });
      if (answeredBy === 'call_ended') run.inputs.forget(pending.inputId);
    }
    if (run.inputs.pendingInputs().length === 0 && run.activity === 'awaiting_input') {
      // A call still waiting for a person keeps the session awaiting confirmation (patch asked only then).
      const waiting = run.pending.size > 0 && isPatched(RUNNING_TOOLS_AFTER_LAST_DECISION);
      run.setActivity(waiting ? 'awaiting_confirmation' : run.running ? 'running_tools' : 'idle');
    }
  });

  /** Why an answer cannot be taken, or undefined when it can. */
  const refusal = (answer: AnswerInputInput): { type: string; message: string } | undefined => {
    const pending = run.inputs.open(answer.inputId);
    if (!pending) return { type: FailureType.InputUnknown, message: `No input ${answer.inputId} is waiting for an answer.` };
    if (answer.action !== 'accept') return undefined;
    if (!answer.content) return { type: FailureType.SessionInputInvalid, message: 'Invalid answerInput input: content is required with action "accept".' };
    const problems = checkAnswer(pending.requestedSchema, answer.content);
    if (problems.length > 0) return { type: FailureType.SessionInputInvalid, message: `Invalid answerInput input: the content does not fit the server's schema: ${problems.join('; ')}` };
    return undefined;
  };
  const take = (answer: AnswerInputInput): void => {
    const pending = run.inputs.open(answer.inputId);
    if (!pending) return;
    run.inputs.answer(answer.inputId, { action: answer.action, content: answer.content, answeredBy: 'user' });
    run.events.emit({ type: 'input_answered', turnId: pending.turnId, inputId: answer.inputId, toolCallId: pending.toolCallId, action: answer.action, answeredBy: 'user' });
  };

  setHandler(answerInputSignal, (raw) => {
    const answer = parseSignalInput(AnswerInputInput, raw, 'answerInput', ignore, { fromPeople: true });
    if (!answer || !signalAllowed(answer.principal, 'answer', 'answerInput')) return;
    const refused = refusal(answer);
    if (refused) {
      log.warn(`Ignoring an answer: ${refused.message}`, { inputId: answer.inputId });
      ignore();
      return;
    }
    take(answer);
  });
  setHandler(
    answerInputUpdate,
    (raw) => {
      take(parseUpdateInput(AnswerInputInput, raw, 'answerInput'));
      return { accepted: true as const };
    },
    {
      validator: (raw) => {
        const answer = parseUpdateInput(AnswerInputInput, raw, 'answerInput', { strict: true });
        const forbidden = refusalFor(run.owner, answer.principal, 'answer');
        if (forbidden) throw notAuthorized(forbidden);
        const refused = refusal(answer);
        if (!refused) return;
        if (refused.type === FailureType.SessionInputInvalid) throw invalidInput(refused.message);
        throw ApplicationFailure.nonRetryable(refused.message, refused.type);
      },
    },
  );
}
