import { ApplicationFailure } from '@temporalio/workflow';
import { FailureType } from './failure-types';

/**
 * Calls that wait on a session hold one of the server's in-flight updates
 * for as long as they wait: an event reader's long poll until the next
 * event, a turn wait until the turn ends. The server lets one run have 10
 * updates in flight (`history.maxInFlightUpdates`) and
 * refuses the eleventh whatever it is, after the client has retried it for
 * about 40 s. Ten readers of one session left no room for a message, a
 * decision or an answer: each failed with "Workflow Update failed".
 *
 * So waiting calls share a budget below the server's limit, checked in the
 * update validators (they do not run on replay: no patch), and the rest of
 * the slots stay free for the calls that answer at once. A waiting call
 * over the budget is refused with `TooManyWaiting`; the typed client then
 * reads the same thing by query (`readEvents`, `getTurn`), which holds no
 * slot.
 */
export const MAX_WAITING_POLLS = 4;
export const MAX_WAITING_TURN_WAITS = 3;

/**
 * Event polls one run answers. The server caps a run's updates at 2,000
 * (`history.maxTotalUpdates`, continue-as-new suggested at
 * 90%) and refuses every later one, messages and decisions included. The
 * session continues as new between turns when the server suggests it; a
 * long turn with several readers (up to ten polls a second each) could pass
 * the cap before the turn ended. Past this many, polls are refused until
 * the session continues as new after its running turn
 * (CONTINUE_AFTER_POLL_BUDGET), and readers use the query meanwhile.
 */
export const MAX_POLLS_PER_RUN = 1_000;

/**
 * Patch id: a run that has answered MAX_POLLS_PER_RUN event polls continues
 * as new after its turn, so its readers can long-poll again. Asked only
 * then.
 */
export const CONTINUE_AFTER_POLL_BUDGET = 'continue-after-poll-budget';

export function tooManyWaiting(message: string): ApplicationFailure {
  return ApplicationFailure.create({ message, type: FailureType.TooManyWaiting, nonRetryable: true });
}
