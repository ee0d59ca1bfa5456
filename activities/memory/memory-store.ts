import { MongoServerError, type Collection, type Db } from 'mongodb';
import { auditEntryFor, namespaceFields, toStored, type StoredAudit, type StoredMemory } from './memory-docs';
import { notifyNamespaceChange } from './namespace-changes';
import { LastChange, parseMemory, snapshotOf, type AuditActor, type AuditAction, type MemoryDoc, type MemoryNamespace } from './memory-types';

export const MEMORIES_COLLECTION = 'memories';
export const MEMORY_AUDIT_COLLECTION = 'memory_audit';
/** One small document per namespace whose `generation` grows with every write: what recall caches check. */
export const MEMORY_NAMESPACES_COLLECTION = 'memory_namespaces';

export interface NamespaceDoc {
  _id: string;
  tenant: string;
  user: string;
  project?: string;
  generation: number;
  updatedAt: Date;
}

export interface MemoryCollections {
  memories: Collection<StoredMemory>;
  audits: Collection<StoredAudit>;
  namespaces: Collection<NamespaceDoc>;
}

export function memoryCollections(db: Db): MemoryCollections {
  return {
    memories: db.collection<StoredMemory>(MEMORIES_COLLECTION),
    audits: db.collection<StoredAudit>(MEMORY_AUDIT_COLLECTION),
    namespaces: db.collection<NamespaceDoc>(MEMORY_NAMESPACES_COLLECTION),
  };
}

/** Who is writing and when; recorded in the audit. */
export interface WriteContext {
  actor: AuditActor;
  now: Date;
}

/** What a write decides, given the current document: a new version and why, or nothing to do. */
export type Decision = { action: AuditAction; reason: string; next: MemoryDoc } | null;

/** Another writer kept winning the race for one memory. Retrying the activity is safe. */
export class MemoryWriteConflictError extends Error {
  override readonly name = 'MemoryWriteConflictError';
}

/** Optimistic writes retry this often when another writer moved the version in between. */
const MAX_WRITE_ATTEMPTS = 5;

const isDuplicateKey = (err: unknown): boolean => err instanceof MongoServerError && err.code === 11000;

/**
 * Versioned, audited writes to one namespace's memories, with only
 * single-document atomicity (FerretDB has no transactions).
 *
 * A write reads the document, decides, and replaces it conditionally on the
 * version it read (inserts when new); a lost race reads again. The change is
 * stored on the document in that same atomic write (`lastChange`), so the
 * audit entry written next, under a deterministic id, can be rebuilt by the
 * next touch if the process dies in between. Then the namespace's generation
 * is bumped and this process's recall caches are told what changed.
 */
export class NamespaceWriter {
  constructor(
    private readonly namespace: MemoryNamespace,
    private readonly nsKey: string,
    private readonly collections: MemoryCollections,
  ) {}

  /** Runs `decide` on the current document and writes what it returns; the action taken, or null. */
  async write(id: string, ctx: WriteContext, decide: (current: MemoryDoc | null) => Decision): Promise<AuditAction | null> {
    for (let attempt = 1; attempt <= MAX_WRITE_ATTEMPTS; attempt++) {
      const raw = await this.collections.memories.findOne({ _id: id, ns: this.nsKey });
      const current = raw ? parseMemory(raw) : null;
      const decision = decide(current);
      if (!decision) {
        if (raw && current) await this.repairAudit(raw, current, ctx.now);
        return null;
      }
      const change: LastChange = { action: decision.action, reason: decision.reason, before: current ? snapshotOf(current) : null, at: ctx.now, actor: ctx.actor };
      const next = { ...decision.next, _id: id, ns: this.nsKey, version: (current?.version ?? 0) + 1 } as MemoryDoc;
      if (next.status !== 'superseded') delete next.supersededBy;
      if (!(await this.commit(next, change, current?.version ?? null))) continue;
      await this.insertAudit(auditEntryFor(next, change));
      await this.bumpGeneration(ctx.now, [next]);
      return decision.action;
    }
    throw new MemoryWriteConflictError(`memory ${id} kept changing under ${MAX_WRITE_ATTEMPTS} attempts to write it; retry`);
  }

  /** Inserts new documents in bulk (version 1), each with its audit entry, and bumps the generation once. */
  async insertNew(docs: MemoryDoc[], change: LastChange): Promise<void> {
    for (let i = 0; i < docs.length; i += 500) {
      const slice = docs.slice(i, i + 500);
      await this.collections.memories.insertMany(slice.map((doc) => toStored(doc, change)), { ordered: false });
      await this.collections.audits.insertMany(slice.map((doc) => auditEntryFor(doc, change)), { ordered: false });
    }
    await this.bumpGeneration(change.at, docs);
  }

  private async commit(next: MemoryDoc, change: LastChange, expectedVersion: number | null): Promise<boolean> {
    const stored = toStored(next, change);
    if (expectedVersion === null) {
      try {
        await this.collections.memories.insertOne(stored);
        return true;
      } catch (err) {
        if (isDuplicateKey(err)) return false;
        throw err;
      }
    }
    const result = await this.collections.memories.replaceOne({ _id: next._id, ns: this.nsKey, version: expectedVersion }, stored);
    return result.matchedCount === 1;
  }

  private async insertAudit(entry: StoredAudit): Promise<boolean> {
    try {
      await this.collections.audits.insertOne(entry);
      return true;
    } catch (err) {
      if (isDuplicateKey(err)) return false;
      throw err;
    }
  }

  /** Writes the audit entry of the current version if an earlier attempt died before it did. */
  private async repairAudit(raw: StoredMemory, current: MemoryDoc, now: Date): Promise<void> {
    const change = LastChange.safeParse(raw.lastChange);
    if (!change.success) return;
    if (await this.insertAudit(auditEntryFor(current, change.data))) await this.bumpGeneration(now, [current]);
  }

  /** Bumps the namespace's generation and tells this process's recall caches what changed. */
  private async bumpGeneration(now: Date, changed: MemoryDoc[]): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        const after = await this.collections.namespaces.findOneAndUpdate(
          { _id: this.nsKey },
          { $inc: { generation: 1 }, $set: { updatedAt: now }, $setOnInsert: namespaceFields(this.namespace) },
          { upsert: true, returnDocument: 'after', includeResultMetadata: false },
        );
        if (after) notifyNamespaceChange({ nsKey: this.nsKey, generation: after.generation, changed });
        return;
      } catch (err) {
        // Two first writes racing to create the namespace document: one insert loses, and its retry updates.
        if (!isDuplicateKey(err) || attempt >= 3) throw err;
      }
    }
  }
}
