import { PATCH_BASELINE, baselinePatchIds } from '../../workflows/patches';
// Every module of the session's workflow, so each patch it declares is counted.
import '../../workflows/index';

/*
 * The baseline is closed (workflows/patches.ts). A run that recorded
 * PATCH_BASELINE took the new path of each patch below without a marker of
 * its own; one added to the list later would be taken on replay by runs that
 * started with the baseline before it existed, and fail them with a
 * nondeterminism error. A new patch gets its own marker: declare it with a
 * plain string, not inBaseline().
 */
const BASELINE_2026_12 = [
  'archive-loaded-locally',
  'archived-status-in-archive',
  'budget-check',
  'carried-state-checked',
  'end-request-carried',
  'events-from-workflow-only',
  'events-in-archive',
  'fold-backoff',
  'forgotten-turn-result',
  'idempotency-key-per-step',
  'idle-timer-outlives-turns',
  'memo-version-at-turn-end',
  'message-arriving-before-close',
  'model-prompt-by-ref',
  'pending-approvals-attribute',
  'principal-required',
  'session-sets-search-attributes',
  'status-shows-approvals',
  'tool-args-full-json-schema',
  'tool-pins-in-archive',
  'tool-risk-per-call',
  'turn-start-together',
  'unfolded-cap',
];

describe('patch baseline', () => {
  it(`covers exactly the patches older than ${PATCH_BASELINE}`, () => {
    expect(baselinePatchIds()).toEqual(BASELINE_2026_12);
  });
});
