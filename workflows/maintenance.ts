import { proxyActivities } from '@temporalio/workflow';
import { Principal, hasTenantRole, notAuthorized } from './principal';
import type { SessionActivities } from '../activities/activity-types';
import type {
  DeleteMemoryInput,
  DeleteMemoryResult,
  ListMemoriesInput,
  ListMemoriesResult,
  MemoryActivities,
  MemoryAuditInput,
  MemoryAuditResult,
} from '../activities/memory/memory-activity-types';

const { expireArchives } = proxyActivities<SessionActivities>({
  startToCloseTimeout: '5 minutes',
  retry: { maximumAttempts: 5, initialInterval: '5 seconds' },
});
const { sweepExpiredMemories, listMemories, deleteMemory, memoryAuditTrail } = proxyActivities<MemoryActivities>({
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
export async function listUserMemories(input: ListMemoriesInput & { principal?: Principal }): Promise<ListMemoriesResult> {
  const { principal, ...request } = input;
  checkMemoryAccess(principal, request.namespace, 'list');
  return listMemories(request);
}

/** Deletes one of a user's memories (audited, with who deleted it), for the client. */
export async function deleteUserMemory(input: DeleteMemoryInput & { principal?: Principal }): Promise<DeleteMemoryResult> {
  const { principal, ...request } = input;
  const caller = checkMemoryAccess(principal, request.namespace, 'delete');
  // One more optional field in the same activity call: histories recorded before it replay unchanged.
  return deleteMemory({ ...request, deletedBy: { tenant: caller.tenant, user: caller.user } });
}

/** One memory's audit trail (what changed, why, by whom), for the client; the same access as listing. */
export async function readUserMemoryAudit(input: MemoryAuditInput & { principal?: Principal }): Promise<MemoryAuditResult> {
  const { principal, ...request } = input;
  checkMemoryAccess(principal, request.namespace, 'read the audit trail of');
  return memoryAuditTrail(request);
}

/**
 * A user's memories are theirs: only that user, or an admin of their tenant,
 * may list them, read their audit trail or delete them. Returns the caller's
 * principal; otherwise the run fails with `NotAuthorized` before any activity
 * is scheduled, and the message echoes only what the caller sent.
 */
export function checkMemoryAccess(raw: unknown, namespace: { tenant: string; user: string }, action: 'list' | 'delete' | 'read the audit trail of'): Principal {
  const parsed = Principal.safeParse(raw);
  if (!parsed.success) throw notAuthorized(`Not authorized: a principal ({ tenant, user }) is required to ${action} memories; only their user or an admin of their tenant may.`);
  const p = parsed.data;
  if ((p.tenant === namespace.tenant && p.user === namespace.user) || hasTenantRole(namespace.tenant, p, 'admin')) return p;
  throw notAuthorized(`Not authorized: ${p.tenant}/${p.user} may not ${action} memories of ${namespace.tenant}/${namespace.user}; only that user or an admin of that tenant may.`);
}
