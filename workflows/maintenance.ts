import { proxyActivities } from '@temporalio/workflow';
import { z } from 'zod';
import { Principal, hasTenantRole, notAuthorized } from './principal';
import { describeZodError, invalidInput } from './input-guard';
import { UserNamespace } from './session-types';
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
  const { request } = memoryRequest(input, 'listUserMemories', 'list', false);
  return listMemories(request as ListMemoriesInput);
}

/** Deletes one of a user's memories (audited, with who deleted it), for the client. */
export async function deleteUserMemory(input: DeleteMemoryInput & { principal?: Principal }): Promise<DeleteMemoryResult> {
  const { caller, request } = memoryRequest(input, 'deleteUserMemory', 'delete', true);
  // One more optional field in the same activity call: histories recorded before it replay unchanged.
  return deleteMemory({ ...(request as DeleteMemoryInput), deletedBy: { tenant: caller.tenant, user: caller.user } });
}

/** One memory's audit trail (what changed, why, by whom), for the client; the same access as listing. */
export async function readUserMemoryAudit(input: MemoryAuditInput & { principal?: Principal }): Promise<MemoryAuditResult> {
  const { request } = memoryRequest(input, 'readUserMemoryAudit', 'read the audit trail of', true);
  return memoryAuditTrail(request as MemoryAuditInput);
}

/** What every memory workflow needs before anything else is read; the activity checks the rest (kinds, limit, id format). */
const MemoryRequestShape = z.object({ namespace: UserNamespace, memoryId: z.string().min(1).max(200).optional() }).passthrough();

/**
 * Checks a raw start input (another SDK or the CLI may send anything) before
 * anything of it is used, failing the run with a named error instead of a
 * workflow task: no principal is `NotAuthorized`, as the archive reader says
 * it; a request that does not parse is `SessionInputInvalid`, naming each bad
 * field and none of its value; then the caller must be the user or an admin.
 */
function memoryRequest(raw: unknown, name: string, action: MemoryAction, needsId: boolean): { caller: Principal; request: z.infer<typeof MemoryRequestShape> } {
  const input = typeof raw === 'object' && raw !== null && !Array.isArray(raw) ? (raw as Record<string, unknown>) : {};
  const { principal, ...rest } = input;
  const caller = Principal.safeParse(principal);
  if (!caller.success) throw notAuthorized(`Not authorized: a principal ({ tenant, user }) is required to ${action} memories; only their user or an admin of their tenant may.`);
  const parsed = MemoryRequestShape.safeParse(rest);
  if (!parsed.success) throw invalidInput(`Invalid ${name} input: ${describeZodError(parsed.error)}`);
  if (needsId && parsed.data.memoryId === undefined) throw invalidInput(`Invalid ${name} input: memoryId: Required`);
  return { caller: checkMemoryAccess(caller.data, parsed.data.namespace, action), request: parsed.data };
}

type MemoryAction = 'list' | 'delete' | 'read the audit trail of';

/**
 * A user's memories are theirs: only that user, or an admin of their tenant,
 * may list them, read their audit trail or delete them. Returns the caller;
 * otherwise the run fails with `NotAuthorized` before any activity is
 * scheduled, and the message echoes only what the caller sent.
 */
export function checkMemoryAccess(p: Principal, namespace: { tenant: string; user: string }, action: MemoryAction): Principal {
  if ((p.tenant === namespace.tenant && p.user === namespace.user) || hasTenantRole(namespace.tenant, p, 'admin')) return p;
  throw notAuthorized(`Not authorized: ${p.tenant}/${p.user} may not ${action} memories of ${namespace.tenant}/${namespace.user}; only that user or an admin of that tenant may.`);
}
