import type { Filter } from 'mongodb';
import type { StoredMemory } from './memory-docs';
import { PURGEABLE_STATUSES, scrubbedAudit } from './memory-purge';
import type { MemoryRepository, ScopedMemories } from './memory-repository';
import type { MemoryCollections } from './memory-store';
import { MemoryNamespace } from './memory-types';

/** How old a pending write claim must be before the sweep finishes it. */
export const STALE_CLAIM_MS = 60 * 60_000;

export interface PurgeReport {
  /** Memories whose content was removed. */
  purged: number;
  /** Audit entries older than the retention whose content was removed. */
  auditsScrubbed: number;
  /** Write claims whose writer died mid-write, finished (their version written and shown in the audit). */
  claimsFinished: number;
  /** Stored recall copies older than the retention, dropped. */
  copiesDropped: number;
  /** False when the time budget ran out first; the next sweep goes on. */
  complete: boolean;
}

/**
 * Removes the content of memories deleted or expired at least `retentionMs`
 * before `now`, of audit entries older than that, and drops stored recall
 * copies saved before then (a copy saved after a memory ended never holds
 * it; an older one may). Each namespace purged has its generation bumped, so
 * no worker's cached copy is served again. See memory-purge.ts.
 */
export async function purgeEnded(
  repo: MemoryRepository,
  collections: MemoryCollections,
  now: Date,
  retentionMs: number,
  options: { batchSize: number; budgetMs: number },
): Promise<PurgeReport> {
  const { batchSize } = options;
  const cutoff = new Date(now.getTime() - retentionMs);
  const report: PurgeReport = { purged: 0, auditsScrubbed: 0, claimsFinished: 0, copiesDropped: 0, complete: true };
  // A first sweep over a long history can have far more to purge than one activity should do; what is left waits for the next sweep.
  const deadline = performance.now() + options.budgetMs;
  const overBudget = () => {
    if (performance.now() < deadline) return false;
    report.complete = false;
    return true;
  };
  const skipped: string[] = [];
  const touched = new Map<string, ScopedMemories>();
  // A claim pending past the writers' lease (an hour here, far past the 30 s a writer waits before finishing another's)
  // belongs to a writer that died mid-write, and nobody writes that version again: finish it, so it is purged and scrubbed below.
  const stale = new Date(now.getTime() - STALE_CLAIM_MS);
  for (const tried: string[] = []; !overBudget(); ) {
    const claims = await collections.audits
      .find({ pending: { $exists: true }, claimedAt: { $lte: stale }, ...(tried.length > 0 ? { _id: { $nin: tried } } : {}) }, { projection: { _id: 1, pending: 1 } })
      .limit(batchSize)
      .toArray();
    if (claims.length === 0) break;
    for (const claim of claims) {
      tried.push(claim._id);
      const owner = claim.pending as Partial<StoredMemory> | undefined;
      const ns = MemoryNamespace.safeParse({ tenant: owner?.tenant, user: owner?.user, ...(owner?.project ? { project: owner.project } : {}) });
      const scope = ns.success ? repo.forNamespace(ns.data) : null;
      if (scope && (await scope.finishStaleClaim(claim._id, now))) {
        report.claimsFinished++;
        // A finished deletion must leave the caches as any deletion does.
        touched.set(scope.nsKey, scope);
      }
    }
  }
  while (!overBudget()) {
    const filter: Filter<StoredMemory> = { status: { $in: [...PURGEABLE_STATUSES] }, updatedAt: { $lte: cutoff }, purgedAt: { $exists: false } };
    if (skipped.length > 0) filter._id = { $nin: skipped };
    const batch = await collections.memories.find(filter, { projection: { _id: 1, tenant: 1, user: 1, project: 1 } }).limit(batchSize).toArray();
    if (batch.length === 0) break;
    for (const raw of batch) {
      const ns = MemoryNamespace.safeParse({ tenant: raw.tenant, user: raw.user, ...(raw.project ? { project: raw.project } : {}) });
      const scope = ns.success ? repo.forNamespace(ns.data) : null;
      if (scope && (await scope.purge(String(raw._id), now, cutoff))) {
        report.purged++;
        touched.set(scope.nsKey, scope);
      } else skipped.push(String(raw._id));
    }
  }
  for (const scope of touched.values()) await scope.invalidateCachedCopies(now);
  // Entries still pending belong to a write in progress (or one another writer finishes); they are scrubbed by a later sweep.
  // A scrubbed entry leaves the filter by its purgedAt; only one that could not be replaced is excluded by id.
  for (const unchanged: string[] = []; !overBudget(); ) {
    const entries = await collections.audits
      .find({ at: { $lte: cutoff }, purgedAt: { $exists: false }, pending: { $exists: false }, ...(unchanged.length > 0 ? { _id: { $nin: unchanged } } : {}) })
      .limit(batchSize)
      .toArray();
    if (entries.length === 0) break;
    for (const entry of entries) {
      const result = await collections.audits.replaceOne({ _id: entry._id, purgedAt: { $exists: false } }, scrubbedAudit(entry, now));
      report.auditsScrubbed += result.modifiedCount;
      if (result.modifiedCount === 0) unchanged.push(entry._id);
    }
  }
  report.copiesDropped = (await collections.recallCopies.deleteMany({ savedAt: { $lte: cutoff } })).deletedCount;
  return report;
}

