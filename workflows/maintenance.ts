import { proxyActivities } from '@temporalio/workflow';
import type { SessionActivities } from '../activities/activity-types';
import type {
  DeleteMemoryInput,
  DeleteMemoryResult,
  ListMemoriesInput,
  ListMemoriesResult,
  MemoryActivities,
} from '../activities/memory/memory-activity-types';

const { expireArchives } = proxyActivities<SessionActivities>({
  startToCloseTimeout: '5 minutes',
  retry: { maximumAttempts: 5, initialInterval: '5 seconds' },
});
const { sweepExpiredMemories, listMemories, deleteMemory } = proxyActivities<MemoryActivities>({
  startToCloseTimeout: '5 minutes',
  retry: { maximumAttempts: 5, initialInterval: '1 second' },
});

export interface MaintenanceResult {
  expiredArchives: number;
  expiredMemories: number;
}

/**
 * Run by a Temporal Schedule: marks archived sessions past their retention as
 * expired and purges their content, and expires memories past their TTL
 * (FerretDB has no TTL indexes, so expiry is a sweep rather than an index
 * option; it works the same on MongoDB). Recall also filters expired
 * memories at query time, so nothing expired is recalled before a sweep.
 */
export async function maintenanceSweep(): Promise<MaintenanceResult> {
  const archives = await expireArchives({});
  const memories = await sweepExpiredMemories({});
  return { expiredArchives: archives.expired, expiredMemories: memories.expired };
}

/**
 * A user's memories, for the client: the client reaches MongoDB only through
 * the worker, so it needs no database credentials.
 */
export async function listUserMemories(input: ListMemoriesInput): Promise<ListMemoriesResult> {
  return listMemories(input);
}

/** Deletes one of a user's memories (audited), for the client. */
export async function deleteUserMemory(input: DeleteMemoryInput): Promise<DeleteMemoryResult> {
  return deleteMemory(input);
}
