import type { ChatRequest } from './chat-request';
import { describeIssues } from './invalid-body';
import { type RecordedRequest, type ScriptedStep, StepResponse } from './scenario';
import type { StepQueues } from './step-queue';

/** A request the scripted model will not answer; the reason is what `assertDone` reports. */
export interface Refusal {
  unexpected: string;
}

/**
 * Takes the lane's next step (or the fallback) and turns it into a validated
 * response, recording which step answered. A respond function is test code
 * running inside the server, so its throw or malformed result is reported
 * as an unexpected request rather than crashing the server.
 */
export function pickResponse(
  queues: StepQueues,
  record: RecordedRequest,
  request: ChatRequest,
  fallback: ((req: ChatRequest) => StepResponse) | undefined,
): StepResponse | Refusal {
  const prefix = `scripted model: unexpected request POST ${record.path} on lane "${record.lane}"`;
  const taken = queues.take(record.lane, request);
  let respond: ScriptedStep['respond'];
  let source: string;
  if (taken.kind === 'step') {
    record.stepName = taken.stepName;
    respond = taken.step.respond;
    source = `step ${taken.stepName}`;
  } else if (fallback !== undefined) {
    record.stepName = 'fallback';
    respond = fallback;
    source = 'the fallback';
  } else {
    return { unexpected: `${prefix}: ${taken.reason}` };
  }
  if (typeof respond !== 'function') return respond;

  let produced: unknown;
  try {
    produced = respond(request);
  } catch (error) {
    return { unexpected: `${prefix}: ${source} threw: ${error instanceof Error ? error.message : String(error)}` };
  }
  const checked = StepResponse.safeParse(produced);
  if (!checked.success) {
    return { unexpected: `${prefix}: ${source} returned an invalid response: ${describeIssues(checked.error)}` };
  }
  return checked.data;
}
