import { ActivityFailure, ApplicationFailure, proxyActivities } from '@temporalio/workflow';
import type { SessionActivities } from '../activities/activity-types';
import type { ArchivedEventsPage } from '../activities/session-archive';
import { FailureType } from './failure-types';
import { Principal, notAuthorized } from './principal';

const { readArchivedEvents: readFromArchive } = proxyActivities<SessionActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { maximumAttempts: 3, initialInterval: '500 milliseconds', nonRetryableErrorTypes: [FailureType.NotAuthorized, 'ArchiveInvalid'] },
});

export interface ReadSessionArchiveInput {
  sessionId: string;
  fromOffset: number;
  limit?: number;
  principal?: Principal;
}

/**
 * The events an archived session kept, for the client: a closed run's
 * stream can no longer be polled, and the client reaches MongoDB only
 * through the worker. The owner, or an approver or admin of its tenant, may
 * read them; anyone else gets `NotAuthorized` and nothing of the session.
 */
export async function readSessionArchive(input: ReadSessionArchiveInput): Promise<ArchivedEventsPage | null> {
  const principal = Principal.safeParse(input?.principal);
  if (!principal.success) throw notAuthorized('Not authorized: a principal ({ tenant, user }) is required to read an archived session\'s events.');
  if (typeof input.sessionId !== 'string' || !Number.isInteger(input.fromOffset) || input.fromOffset < 0) {
    throw ApplicationFailure.create({ message: 'readSessionArchive needs { sessionId: string, fromOffset: integer >= 0 }', type: FailureType.SessionInputInvalid, nonRetryable: true });
  }
  const limit = Math.min(Math.max(Math.floor(input.limit ?? 1_000), 1), 5_000);
  try {
    return await readFromArchive({ sessionId: input.sessionId, fromOffset: input.fromOffset, limit, principal: principal.data });
  } catch (err) {
    // The activity's refusal, as the workflow's own failure (the client maps it to NotAuthorizedError).
    if (err instanceof ActivityFailure && err.cause instanceof ApplicationFailure && err.cause.type === FailureType.NotAuthorized) throw notAuthorized(err.cause.message);
    throw err;
  }
}
