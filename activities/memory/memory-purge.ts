import { z } from 'zod';
import type { StoredAudit, StoredMemory } from './memory-docs';
import { MemoryId, MemoryKind, MemoryStatus, type MemorySnapshot } from './memory-types';

/**
 * Content purge. A deleted or expired memory is hidden at once; after the
 * audit retention its content goes too: the document keeps only what says
 * that a memory existed and how it ended (id, namespace, kind, status,
 * timestamps, version) and is marked `purgedAt`. Audit entries older than the
 * retention keep their action, actor and times, but not the texts, values or
 * reasons they recorded.
 */

/** What a purged memory document keeps. */
export const PurgedMemoryDoc = z.object({
  _id: MemoryId,
  ns: z.string().min(1),
  tenant: z.string().min(1),
  user: z.string().min(1),
  project: z
    .string()
    .nullish()
    .transform((p) => p ?? undefined),
  kind: MemoryKind,
  status: MemoryStatus,
  createdAt: z.date(),
  /** When it ended (deleted or expired): a statement older than this never brings it back. */
  updatedAt: z.date(),
  expiresAt: z.date(),
  version: z.number().int().min(1),
  purgedAt: z.date(),
});
export type PurgedMemoryDoc = z.output<typeof PurgedMemoryDoc>;

/** Statuses whose content is purged once they are older than the retention. */
export const PURGEABLE_STATUSES = ['deleted', 'expired'] as const;

export function isPurged(raw: unknown): boolean {
  return typeof raw === 'object' && raw !== null && (raw as { purgedAt?: unknown }).purgedAt instanceof Date;
}

/** The next version of an ended memory, without its content. */
export function purgedDocOf(raw: StoredMemory, now: Date): PurgedMemoryDoc {
  return {
    _id: raw._id,
    ns: raw.ns,
    tenant: raw.tenant,
    user: raw.user,
    ...(raw.project ? { project: raw.project } : {}),
    kind: raw.kind,
    status: raw.status,
    createdAt: raw.createdAt,
    updatedAt: raw.updatedAt,
    expiresAt: raw.expiresAt,
    version: raw.version + 1,
    purgedAt: now,
  } as PurgedMemoryDoc;
}

/** A snapshot with the content left out: what an audit entry keeps after the retention. */
export function contentFreeSnapshot(snapshot: Pick<MemorySnapshot, 'kind' | 'status' | 'expiresAt' | 'updatedAt' | 'supersededBy'>): MemorySnapshot {
  return {
    kind: snapshot.kind,
    status: snapshot.status,
    text: '',
    expiresAt: snapshot.expiresAt,
    updatedAt: snapshot.updatedAt,
    ...(snapshot.supersededBy ? { supersededBy: snapshot.supersededBy } : {}),
  };
}

export const PURGED_REASON = '(content purged after the audit retention)';

/** An audit entry without content. A pending claim's document is dropped too (callers skip entries still pending). */
export function scrubbedAudit(entry: StoredAudit, now: Date): StoredAudit {
  const { pending: _pending, ...rest } = entry;
  return {
    ...rest,
    reason: PURGED_REASON,
    before: entry.before ? contentFreeSnapshot(entry.before) : null,
    after: contentFreeSnapshot(entry.after),
    purgedAt: now,
  };
}

/** The purge's own audit entry, a claim on the purged version like any write's (memory-store.ts). */
export function purgeAuditEntry(raw: StoredMemory, purged: PurgedMemoryDoc, now: Date): StoredAudit {
  const snapshot = contentFreeSnapshot({ kind: raw.kind, status: raw.status, expiresAt: raw.expiresAt, updatedAt: raw.updatedAt });
  const entry: StoredAudit = {
    _id: `${raw._id}:v${purged.version}`,
    memoryId: raw._id,
    ns: raw.ns,
    tenant: raw.tenant,
    user: raw.user,
    ...(raw.project ? { project: raw.project } : {}),
    kind: raw.kind,
    version: purged.version,
    action: 'purge',
    reason: 'content purged after the audit retention',
    before: snapshot,
    after: snapshot,
    at: now,
    actor: { by: 'sweep' },
    purgedAt: now,
  };
  return entry;
}
