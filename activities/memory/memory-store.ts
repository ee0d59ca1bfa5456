import { MongoServerError, type Collection, type Db } from 'mongodb';
import { auditEntryFor, namespaceFields, toStored, type StoredAudit, type StoredMemory } from './memory-docs';
import { notifyNamespaceChange } from './namespace-changes';
import { isPurged, PURGEABLE_STATUSES, purgeAuditEntry, purgedDocOf, PurgedMemoryDoc } from './memory-purge';
import type { StoredRecallCopy } from './recall-copy';
import { parseMemory, snapshotOf, type AuditAction, type AuditActor, type MemoryChange, type MemoryDoc, type MemoryNamespace } from './memory-types';

export const MEMORIES_COLLECTION = 'memories';
export const MEMORY_AUDIT_COLLECTION = 'memory_audit';
/** One small document per namespace whose `generation` grows with every write: what recall caches check. */
export const MEMORY_NAMESPACES_COLLECTION = 'memory_namespaces';
/** One document per recently recalled namespace, `_id` the namespace key: its recall set, for workers that start cold (recall-copy.ts). */
export const MEMORY_RECALL_COPIES_COLLECTION = 'memory_recall_copies';

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
  recallCopies: Collection<StoredRecallCopy & { _id: string }>;
}

export function memoryCollections(db: Db): MemoryCollections {
  return {
    memories: db.collection<StoredMemory>(MEMORIES_COLLECTION),
    audits: db.collection<StoredAudit>(MEMORY_AUDIT_COLLECTION),
    namespaces: db.collection<NamespaceDoc>(MEMORY_NAMESPACES_COLLECTION),
    recallCopies: db.collection<StoredRecallCopy & { _id: string }>(MEMORY_RECALL_COPIES_COLLECTION),
  };
}

/** Names a namespace of one database, so caches shared by a process never mix two databases' memories. */
export function cacheKeyOf(collections: MemoryCollections, nsKey: string): string {
  return `${collections.memories.dbName}/${nsKey}`;
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

export interface WriterOptions {
  /**
   * Serialize this process's writes per namespace (default true). Tests that
   * simulate several workers in one process turn it off.
   */
  serializeWrites?: boolean;
  /** How long a claimed version may stay unwritten before another writer finishes it (default 30 s). */
  claimLeaseMs?: number;
}

const MAX_WRITE_ATTEMPTS = 12;
const DEFAULT_CLAIM_LEASE_MS = 30_000;

const isDuplicateKey = (err: unknown): boolean => err instanceof MongoServerError && err.code === 11000;
const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

// Per-namespace queues of this process's writes. FerretDB 1.x applies
// concurrent updates to one document non-atomically (measured: concurrent
// conditional replaces both "match", concurrent $inc loses increments), so
// writes from one worker never overlap within a namespace.
const queues = new Map<string, Promise<unknown>>();

async function serialized<T>(key: string, run: () => Promise<T>): Promise<T> {
  const previous = queues.get(key) ?? Promise.resolve();
  const result = previous.then(run, run);
  const tail = result.then(
    () => undefined,
    () => undefined,
  );
  queues.set(key, tail);
  try {
    return await result;
  } finally {
    if (queues.get(key) === tail) queues.delete(key);
  }
}

/**
 * Versioned, audited writes to one namespace's memories, correct without
 * transactions and without relying on atomic updates, so MongoDB and
 * FerretDB behave alike.
 *
 * A version is claimed before it is written: the writer inserts the audit
 * entry `<memoryId>:v<n+1>`, and only one insert of an `_id` can succeed on
 * either server. The claimant then writes the document; a loser reads again
 * and decides again on the new version. The claim carries the whole new
 * document until the write is done, so if the claimant dies another writer
 * finishes it after a lease. The audit therefore never misses a version,
 * and no two writers ever produce the same one.
 */
export class NamespaceWriter {
  private readonly serialize: boolean;
  private readonly leaseMs: number;

  constructor(
    private readonly namespace: MemoryNamespace,
    private readonly nsKey: string,
    private readonly collections: MemoryCollections,
    options: WriterOptions = {},
  ) {
    this.serialize = options.serializeWrites ?? true;
    this.leaseMs = options.claimLeaseMs ?? DEFAULT_CLAIM_LEASE_MS;
  }

  /** Runs `decide` on the current document and writes what it returns; the action taken, or null. */
  write(id: string, ctx: WriteContext, decide: (current: MemoryDoc | null) => Decision): Promise<AuditAction | null> {
    const run = () => this.writeOnce(id, ctx, decide);
    return this.serialize ? serialized(this.nsKey, run) : run();
  }

  /** Inserts new documents in bulk (version 1), each with its audit entry, and bumps the generation once. */
  insertNew(docs: MemoryDoc[], change: MemoryChange): Promise<void> {
    const run = async () => {
      for (let i = 0; i < docs.length; i += 500) {
        const slice = docs.slice(i, i + 500);
        await this.collections.audits.insertMany(slice.map((doc) => auditEntryFor(doc, change)), { ordered: false });
        await this.collections.memories.insertMany(slice.map(toStored), { ordered: false });
      }
      await this.bumpGeneration(change.at, docs);
    };
    return this.serialize ? serialized(this.nsKey, run) : run();
  }

  private async writeOnce(id: string, ctx: WriteContext, decide: (current: MemoryDoc | null) => Decision): Promise<AuditAction | null> {
    for (let attempt = 1; attempt <= MAX_WRITE_ATTEMPTS; attempt++) {
      const raw = await this.collections.memories.findOne({ _id: id, ns: this.nsKey });
      // A purged memory has no content to decide on: it reads as absent, but
      // keeps its version line and its end, so only a statement made after it
      // ended brings it back (as `newerThanEnd` does for an unpurged one).
      const purged = raw && isPurged(raw) ? PurgedMemoryDoc.parse(raw) : null;
      const current = raw && !purged ? parseMemory(raw) : null;
      const decision = decide(current);
      if (!decision) return null;
      if (purged && !(decision.next.statedAt > purged.updatedAt)) return null;
      const version = (purged?.version ?? current?.version ?? 0) + 1;
      const change: MemoryChange = { action: decision.action, reason: decision.reason, before: current ? snapshotOf(current) : null, at: ctx.now, actor: ctx.actor };
      const next = { ...decision.next, _id: id, ns: this.nsKey, version } as MemoryDoc;
      if (next.status !== 'superseded') delete next.supersededBy;
      const claim: StoredAudit = { ...auditEntryFor(next, change), claimedAt: new Date(), pending: toStored(next) };
      if (!(await this.insertClaim(claim))) {
        await this.settleClaim(`${id}:v${version}`, attempt);
        continue;
      }
      await this.apply(claim);
      await this.bumpGeneration(ctx.now, [next]);
      return decision.action;
    }
    throw new MemoryWriteConflictError(`memory ${this.nsKey}/${id} kept changing under ${MAX_WRITE_ATTEMPTS} attempts to write it; retry`);
  }

  /**
   * Removes the content of a memory that ended (deleted or expired) at or
   * before `endedBefore`: a new version claimed like any write, so a writer
   * racing to bring the memory back either wins or finds it purged. False
   * when there was nothing to purge.
   */
  purge(id: string, now: Date, endedBefore: Date): Promise<boolean> {
    const run = async (): Promise<boolean> => {
      for (let attempt = 1; attempt <= MAX_WRITE_ATTEMPTS; attempt++) {
        const raw = await this.collections.memories.findOne({ _id: id, ns: this.nsKey });
        if (!raw || isPurged(raw) || !(PURGEABLE_STATUSES as readonly string[]).includes(raw.status) || !(raw.updatedAt <= endedBefore)) return false;
        const purged = purgedDocOf(raw, now);
        const claim: StoredAudit = { ...purgeAuditEntry(raw, purged, now), claimedAt: new Date(), pending: purged as unknown as StoredMemory };
        if (!(await this.insertClaim(claim))) {
          await this.settleClaim(claim._id, attempt);
          continue;
        }
        await this.apply(claim);
        return true;
      }
      throw new MemoryWriteConflictError(`memory ${this.nsKey}/${id} kept changing under ${MAX_WRITE_ATTEMPTS} attempts to purge it; retry`);
    };
    return this.serialize ? serialized(this.nsKey, run) : run();
  }

  /** Bumps the generation without a changed memory: every worker's cached copy of the namespace is read again. */
  invalidateCopies(now: Date): Promise<number> {
    return this.bumpGeneration(now, []);
  }

  private async insertClaim(claim: StoredAudit): Promise<boolean> {
    try {
      await this.collections.audits.insertOne(claim);
      return true;
    } catch (err) {
      if (isDuplicateKey(err)) return false;
      throw err;
    }
  }

  /** Writes a claimed version's document, then marks the claim done. Safe to run twice. */
  private async apply(claim: StoredAudit): Promise<void> {
    const doc = claim.pending;
    if (!doc) return;
    if (doc.version === 1) {
      try {
        await this.collections.memories.insertOne(doc);
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
      }
    } else {
      // Matches nothing when another writer already finished this claim: same content, nothing lost.
      await this.collections.memories.replaceOne({ _id: doc._id, ns: this.nsKey, version: doc.version - 1 }, doc);
    }
    await this.collections.audits.updateOne({ _id: claim._id }, { $unset: { pending: '' } });
  }

  /**
   * Finishes a claim whose writer died between writing the document and
   * marking the claim done (or before): left pending, its version stayed out
   * of the audit a person reads, and the purge never scrubbed it, so a
   * deleted memory's text outlived the retention. True when it was finished.
   */
  async finishStaleClaim(claimId: string, now: Date): Promise<boolean> {
    const claim = await this.collections.audits.findOne({ _id: claimId, ns: this.nsKey });
    if (!claim?.pending) return false;
    const claimedAt = claim.claimedAt instanceof Date ? claim.claimedAt.getTime() : 0;
    if (now.getTime() - claimedAt < this.leaseMs) return false;
    await this.apply(claim);
    return true;
  }

  /**
   * Someone else holds the claim on this version. Usually they are writing it
   * right now: wait briefly and read again. A claim still pending after the
   * lease belongs to a writer that died: finish its write.
   */
  private async settleClaim(claimId: string, attempt: number): Promise<void> {
    const claim = await this.collections.audits.findOne({ _id: claimId });
    if (!claim?.pending) return;
    const age = Date.now() - (claim.claimedAt instanceof Date ? claim.claimedAt.getTime() : 0);
    if (age >= this.leaseMs) {
      await this.apply(claim);
      return;
    }
    await pause(Math.min(200, 10 * 2 ** Math.min(attempt, 5)));
  }

  /** Bumps the namespace's generation and tells this process's recall caches what changed. */
  private async bumpGeneration(now: Date, changed: MemoryDoc[]): Promise<number> {
    let after: NamespaceDoc | null = null;
    for (let attempt = 1; ; attempt++) {
      try {
        after = await this.collections.namespaces.findOneAndUpdate(
          { _id: this.nsKey },
          { $inc: { generation: 1 }, $set: { updatedAt: now }, $setOnInsert: namespaceFields(this.namespace) },
          { upsert: true, returnDocument: 'after', includeResultMetadata: false },
        );
        break;
      } catch (err) {
        // Two first writes racing to create the namespace document: one insert loses, and its retry updates.
        if (!isDuplicateKey(err) || attempt >= 3) throw err;
      }
    }
    // Awaited: a cache that holds this namespace stores its patched copy before the write returns.
    if (after) await notifyNamespaceChange({ nsKey: this.nsKey, cacheKey: cacheKeyOf(this.collections, this.nsKey), generation: after.generation, changed });
    return after?.generation ?? 0;
  }
}
