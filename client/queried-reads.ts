import { WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { FailureType } from '../workflows/failure-types';
import { TooManyWaitingError } from './errors';

/**
 * How the client reads by query what it could not wait for on an update
 * (workflows/waiting-budget.ts): it asks again after `firstDelayMs`,
 * doubling up to `maxDelayMs` while nothing is new, and tries the waiting
 * call again after `waitAgainAfterMs`, as a slot may have freed.
 */
export const QUERY_READS = { firstDelayMs: 100, maxDelayMs: 1_000, waitAgainAfterMs: 30_000 };

/** The session refused a waiting call because as many wait already as it allows. */
export function isTooManyWaiting(err: unknown): boolean {
  if (err instanceof TooManyWaitingError) return true;
  const cause = err instanceof WorkflowUpdateFailedError ? err.cause : undefined;
  return cause instanceof ApplicationFailure && cause.type === FailureType.TooManyWaiting;
}
