import { sessionOptions } from '../test-env';
import type { SessionOptionsInput } from '../../../workflows/session-types';

export * from './poison-case';
export * from './raw-json';
export { Prng, randomSeed } from './prng';
export { DEEP, generateFuzzCases, type FuzzOptions } from './fuzzer';
export { PoisonModel, pongFor, toolTurnMessage } from './poison-model';
export { PoisonSession, runStartCase, type CaseOutcome, type FreezeReport, type PoisonTarget, type SessionCheck } from './poison-runner';
export { addTally, emptyTally, runCampaign, summaryLine, type CampaignOptions, type PoisonTally } from './poison-campaign';
export { readWholeStream, taskFailuresOf, taskFailuresOfAllRuns, updateAccepted, withTimeout, type TaskFailure } from './session-health';

/**
 * Options of the sessions poison cases go to: no long-term memory (the
 * poison model does not play the extraction model), a short confirmation
 * timeout (a fuzzed call to a risky tool must not hold a turn for minutes),
 * and a small history budget, so sessions continue as new under the fuzzer.
 */
export const poisonSessionOptions = (sessionId: string): SessionOptionsInput =>
  sessionOptions(sessionId, { limits: { confirmationTimeoutMs: 1_000, maxHistoryEvents: 1_000 } });
