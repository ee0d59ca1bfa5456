import type { Collection, Db, Document, Filter } from 'mongodb';
import type { MemoryLog } from './memory-log';
import { memoryIdFor, namespaceKey, sourceKeyOf } from './memory-identity';
import {
  freshDoc,
  refreshedDoc,
  toFloat32,
  viewOf,
  type FactInput,
  type IntentInput,
  type ListPosition,
  type MemoryIdentityFields,
  type PreferenceInput,
  type StoredMemory,
  type VersionFields,
} from './memory-docs';
import { sameValue } from './memory-normalize';
import { isPurged } from './memory-purge';
import { purgeEnded, type PurgeReport } from './memory-purge-sweep';
import { cacheKeyOf, memoryCollections, NamespaceWriter, type Decision, type MemoryCollections, type WriteContext, type WriterOptions } from './memory-store';
import type { StoredRecallCopy } from './recall-copy';
import { vectorSearchPipeline, VectorSearchProbe, type VectorSearchQuery, type VectorSearchSetting } from './vector-search';
import {
  MemoryDocError,
  MemoryNamespace,
  parseAudit,
  parseMemory,
  tryParseMemory,
  type AuditAction,
  type AuditDoc,
  type MemoryChange,
  type MemoryDoc,
  type MemoryKind,
  type MemoryStatus,
} from './memory-types';

export { MEMORIES_COLLECTION, MEMORY_AUDIT_COLLECTION, MEMORY_NAMESPACES_COLLECTION, MEMORY_RECALL_COPIES_COLLECTION, MemoryWriteConflictError, type WriteContext, type WriterOptions } from './memory-store';
export type { PurgeReport } from './memory-purge-sweep';
export { subscribeToNamespaceChanges, type NamespaceChange, type NamespaceChangeListener } from './namespace-changes';

export type WriteOutcome = 'created' | 'overwritten' | 'reinforced' | 'unchanged';

export interface WriteResult {
  outcome: WriteOutcome;
  memoryId: string;
  /** Preferences: ids this write superseded. */
  superseded: string[];
}

const MAX_PREFERENCE_WEIGHT = 100;

// Only this module can make a ScopedMemories: the token is not exported.
const SCOPE_TOKEN: unique symbol = Symbol('ScopedMemories');

/**
 * The long-term memory store. The only way to read or write a user's memories
 * is through `forNamespace(ns)`, whose result carries the namespace in every
 * filter it builds; there is no unscoped query method to call by mistake.
 */
export class MemoryRepository {
  private readonly collections: MemoryCollections;

  constructor(
    db: Db,
    private readonly options: WriterOptions = {},
  ) {
    this.collections = memoryCollections(db);
  }

  /** Validates the namespace and returns the handle every memory operation goes through. */
  forNamespace(ns: MemoryNamespace): ScopedMemories {
    const parsed = MemoryNamespace.parse(ns);
    return new ScopedMemories(SCOPE_TOKEN, parsed, this.collections, this.options);
  }

  /**
   * Indexes for the queries below. Uniqueness of the active fact per namespace
   * and key does not need one: it comes from the deterministic `_id`
   * (FerretDB has no partial unique indexes, and no TTL indexes either, so
   * expiry is a scheduled sweep plus a query-time filter).
   */
  async ensureIndexes(): Promise<void> {
    const { memories, audits } = this.collections;
    await memories.createIndex({ ns: 1, status: 1, expiresAt: 1 }, { name: 'recall' });
    await memories.createIndex({ ns: 1, kind: 1, status: 1, updatedAt: -1 }, { name: 'list_and_contradictions' });
    await memories.createIndex({ status: 1, expiresAt: 1 }, { name: 'expiry_sweep' });
    await memories.createIndex({ status: 1, updatedAt: 1 }, { name: 'purge_sweep' });
    await audits.createIndex({ memoryId: 1, version: 1 }, { name: 'by_memory' });
    await audits.createIndex({ at: 1 }, { name: 'audit_retention' });
    await audits.createIndex({ ns: 1, at: -1 }, { name: 'by_namespace' });
  }

  /**
   * Marks every active memory past its `expiresAt` as expired, in every
   * namespace, each through its own scope so it is audited like any write.
   * Recall already filters expired memories at query time; the sweep makes
   * the status and the audit say so.
   */
  async sweepExpired(
    now: Date,
    options: { batchSize?: number; budgetMs?: number; onMalformed?: (error: MemoryDocError) => void } = {},
  ): Promise<{ expired: number; malformed: number; complete: boolean }> {
    const batchSize = options.batchSize ?? 500;
    // Each expiry is a versioned write (seconds apiece on FerretDB under load): a backlog is worked off over several sweeps.
    const deadline = performance.now() + (options.budgetMs ?? Number.POSITIVE_INFINITY);
    // Documents that could not be expired this run (malformed, or changed under us) are not asked for again until the next run.
    const skipped: string[] = [];
    let expired = 0;
    let malformed = 0;
    for (;;) {
      const filter: Filter<StoredMemory> = { status: 'active', expiresAt: { $lte: now } };
      if (skipped.length > 0) filter._id = { $nin: skipped };
      const batch = await this.collections.memories.find(filter, { projection: { embedding: 0 } }).limit(batchSize).toArray();
      if (batch.length === 0) break;
      for (const raw of batch) {
        if (performance.now() > deadline) return { expired, malformed, complete: false };
        const id = String(raw._id);
        const ns = MemoryNamespace.safeParse({ tenant: raw.tenant, user: raw.user, ...(raw.project ? { project: raw.project } : {}) });
        let done = false;
        let bad = !ns.success;
        try {
          done = ns.success && (await this.forNamespace(ns.data).expire(id, now));
        } catch (err) {
          if (!(err instanceof MemoryDocError)) throw err;
          bad = true;
          options.onMalformed?.(err);
        }
        if (done) expired++;
        else {
          skipped.push(id);
          if (bad) malformed++;
        }
      }
    }
    return { expired, malformed, complete: true };
  }

  /** Decides, once, whether recall on this database goes to Atlas Vector Search (vector-search.ts). */
  vectorSearchProbe(setting: VectorSearchSetting, index: string, log?: MemoryLog): VectorSearchProbe {
    return new VectorSearchProbe(this.collections.memories as unknown as Collection<Document>, setting, index, log);
  }

  /** Purges the content of memories ended more than `retentionMs` ago, and of older audit entries (see `purgeEnded`). */
  purgeEnded(now: Date, retentionMs: number, options: { batchSize?: number; budgetMs?: number } = {}): Promise<PurgeReport> {
    return purgeEnded(this, this.collections, now, retentionMs, { batchSize: options.batchSize ?? 500, budgetMs: options.budgetMs ?? Number.POSITIVE_INFINITY });
  }
}

/** A namespace's memories. Obtained only from `MemoryRepository.forNamespace`. */
export class ScopedMemories {
  readonly namespace: MemoryNamespace;
  /** Canonical namespace key; part of every filter. */
  readonly nsKey: string;
  /** The namespace in this database: what recall caches key their copies by. */
  readonly cacheKey: string;
  private readonly writer: NamespaceWriter;

  constructor(
    token: typeof SCOPE_TOKEN,
    namespace: MemoryNamespace,
    private readonly collections: MemoryCollections,
    options: WriterOptions = {},
  ) {
    if (token !== SCOPE_TOKEN) throw new Error('ScopedMemories comes from MemoryRepository.forNamespace(ns)');
    this.namespace = namespace;
    this.nsKey = namespaceKey(namespace);
    this.cacheKey = cacheKeyOf(collections, this.nsKey);
    this.writer = new NamespaceWriter(namespace, this.nsKey, collections, options);
  }

  private write(id: string, ctx: WriteContext, decide: (current: MemoryDoc | null) => Decision): Promise<AuditAction | null> {
    return this.writer.write(id, ctx, decide);
  }

  private fresh(id: string, identity: MemoryIdentityFields, input: VersionFields, now: Date): MemoryDoc {
    return freshDoc(id, this.namespace, this.nsKey, identity, input, now);
  }

  /** Adds the namespace to a filter; the namespace always wins over anything the filter says. */
  private scoped(filter: Filter<StoredMemory> = {}): Filter<StoredMemory> {
    return { ...filter, ns: this.nsKey };
  }

  // ---- reads -------------------------------------------------------------

  /** Grows with every write to this namespace; 0 when it has never had a memory. */
  async generation(): Promise<number> {
    const doc = await this.collections.namespaces.findOne({ _id: this.nsKey });
    return doc?.generation ?? 0;
  }

  /** Active, unexpired memories with their embeddings: the recall set. Malformed documents are returned apart, not thrown. */
  async loadActive(now: Date): Promise<{ memories: MemoryDoc[]; malformed: MemoryDocError[] }> {
    const raws = await this.collections.memories.find(this.scoped({ status: 'active', expiresAt: { $gt: now } })).toArray();
    return this.parseAll(raws);
  }

  /** Atlas `$vectorSearch` over this namespace's live memories of one embedder; hits unparsed (vector-search.ts maps them). */
  async vectorSearch(q: Omit<VectorSearchQuery, 'nsKey'>): Promise<unknown[]> {
    return this.collections.memories.aggregate(vectorSearchPipeline({ ...q, nsKey: this.nsKey })).toArray();
  }

  /** Live memories whose vectors are of another embedder (not yet re-embedded): left out of recall, counted. */
  async countOtherEmbedders(embedderId: string, now: Date): Promise<number> {
    return this.collections.memories.countDocuments(this.scoped({ status: 'active', expiresAt: { $gt: now }, embedderId: { $ne: embedderId } }));
  }

  /** The namespace's stored recall copy, unparsed (recall-copy.ts parses it); null when there is none. One `_id` lookup. */
  async readRecallCopy(): Promise<unknown> {
    return this.collections.recallCopies.findOne({ _id: this.nsKey });
  }

  /**
   * Stores the namespace's recall copy over the previous one. Unconditional:
   * any filter but `_id` alone would be a scan of every copy on FerretDB, and
   * an older copy landing last is only behind, never wrong (it names its generation).
   */
  async writeRecallCopy(copy: StoredRecallCopy): Promise<void> {
    await this.collections.recallCopies.replaceOne({ _id: this.nsKey }, copy, { upsert: true });
  }

  async get(id: string): Promise<MemoryDoc | null> {
    const raw = await this.collections.memories.findOne(this.scoped({ _id: id }));
    return raw && !isPurged(raw) ? parseMemory(raw) : null;
  }

  /**
   * Newest first. `contains` matches the text case-insensitively in the
   * database, before the limit, so an old match is found however many newer
   * memories there are; `after` continues from a page's `next`.
   */
  async list(
    options: { kinds?: MemoryKind[]; statuses?: MemoryStatus[]; limit?: number; contains?: string; after?: ListPosition; idPrefix?: string } = {},
  ): Promise<{ memories: MemoryDoc[]; malformed: MemoryDocError[]; next?: ListPosition }> {
    // Purged memories have no content to list; their audit entries still say what happened.
    const filter: Filter<StoredMemory> = { status: { $in: options.statuses ?? ['active'] }, purgedAt: { $exists: false } };
    // The short ids a prompt shows (`mem:ab12`) are the start of the hex: found in the database, however old.
    if (options.idPrefix !== undefined) {
      if (!/^[0-9a-f]{1,24}$/.test(options.idPrefix)) throw new Error(`idPrefix must be lowercase hex, got "${options.idPrefix.slice(0, 40)}"`);
      filter._id = { $regex: `^mem_${options.idPrefix}` };
    }
    if (options.kinds) filter.kind = { $in: options.kinds };
    // A regex of the escaped text: FerretDB has no text indexes, and the user's text is never a pattern.
    if (options.contains) filter.text = { $regex: literalPattern(options.contains), $options: 'i' };
    if (options.after) filter.$or = [{ updatedAt: { $lt: options.after.updatedAt } }, { updatedAt: options.after.updatedAt, _id: { $gt: options.after.id } }];
    const limit = Math.min(options.limit ?? 100, 500);
    // One more than asked says whether another page follows.
    const raws = await this.collections.memories.find(this.scoped(filter)).sort({ updatedAt: -1, _id: 1 }).limit(limit + 1).toArray();
    const page = raws.slice(0, limit);
    const last = page.at(-1);
    const next = raws.length > limit && last && last.updatedAt instanceof Date ? { updatedAt: last.updatedAt, id: String(last._id) } : undefined;
    return { ...this.parseAll(page), ...(next ? { next } : {}) };
  }

  /** Finishes a write claim of this namespace whose writer died (memory-store.ts); true when it did. */
  finishStaleClaim(claimId: string, now: Date): Promise<boolean> {
    return this.writer.finishStaleClaim(claimId, now);
  }

  /** The audit trail, oldest first: of one memory, or of the whole namespace. */
  async auditTrail(memoryId?: string): Promise<AuditDoc[]> {
    // One memory's versions are its true order; across memories, time is.
    const raws = await (memoryId
      ? this.collections.audits.find({ ns: this.nsKey, memoryId }).sort({ version: 1 })
      : this.collections.audits.find({ ns: this.nsKey }).sort({ at: 1, memoryId: 1, version: 1 })
    )
      .limit(1000)
      .toArray();
    return raws.map(parseAudit);
  }

  /**
   * One memory's audit trail for people to read, oldest first: entries that
   * do not parse are returned apart, and a version still being written (its
   * claim holds the pending document) is left out until it is.
   */
  async readAudit(memoryId: string, limit = 1000): Promise<{ entries: AuditDoc[]; malformed: MemoryDocError[] }> {
    const raws = await this.collections.audits.find({ ns: this.nsKey, memoryId, pending: { $exists: false } }).sort({ version: 1 }).limit(limit).toArray();
    const entries: AuditDoc[] = [];
    const malformed: MemoryDocError[] = [];
    for (const raw of raws) {
      try {
        entries.push(parseAudit(raw));
      } catch (err) {
        if (!(err instanceof MemoryDocError)) throw err;
        malformed.push(err);
      }
    }
    return { entries, malformed };
  }

  private parseAll(raws: unknown[]): { memories: MemoryDoc[]; malformed: MemoryDocError[] } {
    const memories: MemoryDoc[] = [];
    const malformed: MemoryDocError[] = [];
    for (const raw of raws) {
      const result = tryParseMemory(raw);
      if (result.ok && result.value.ns === this.nsKey) memories.push(result.value);
      else if (!result.ok) malformed.push(result.error);
    }
    return { memories, malformed };
  }

  // ---- writes ------------------------------------------------------------

  /** Creates a fact, or overwrites the value of the one with the same key (the audit keeps the old value). */
  async writeFact(input: FactInput, ctx: WriteContext): Promise<WriteResult> {
    const id = memoryIdFor(this.nsKey, { kind: 'fact', key: input.key });
    const sourceKey = sourceKeyOf(input.source);
    const action = await this.write(id, ctx, (current) => {
      const fresh = { kind: 'fact' as const, key: input.key, subject: input.subject, predicate: input.predicate, value: input.value };
      if (!current || !isLive(current, ctx.now)) {
        if (current && !newerThanEnd(input, current, ctx.now)) return null;
        return { action: 'create', reason: current ? `stated again after it was ${endState(current, ctx.now)}` : 'new fact', next: this.fresh(id, fresh, input, ctx.now) };
      }
      if (current.kind !== 'fact' || current.sourceKeys.includes(sourceKey) || input.statedAt < current.statedAt) return null;
      if (sameValue(current.value, input.value)) {
        return { action: 'reinforce', reason: 'stated again', next: { ...refreshedDoc(current, input, ctx.now), text: current.text } };
      }
      return {
        action: 'overwrite',
        reason: `value changed from "${current.value}" to "${input.value}"`,
        next: { ...refreshedDoc(current, input, ctx.now), ...fresh, text: input.text, embedding: toFloat32(input.embedding), embedderId: input.embedderId, source: input.source },
      };
    });
    return { outcome: outcomeOf(action), memoryId: id, superseded: [] };
  }

  /**
   * Creates a preference or, when the same one is stated again, raises its
   * weight. A contradicting active preference (the same statement with the
   * other polarity, or another "prefers" on the same topic) is superseded by
   * whichever of the two the user stated last.
   */
  async writePreference(input: PreferenceInput, ctx: WriteContext): Promise<WriteResult> {
    const id = memoryIdFor(this.nsKey, { kind: 'preference', statement: input.statement, polarity: input.polarity });
    const sourceKey = sourceKeyOf(input.source);
    const action = await this.write(id, ctx, (current) => {
      const fresh = { kind: 'preference' as const, statement: input.statement, polarity: input.polarity, weight: 1, ...(input.topic ? { topic: input.topic } : {}) };
      if (!current || !isLive(current, ctx.now)) {
        if (current && !newerThanEnd(input, current, ctx.now)) return null;
        return { action: 'create', reason: current ? `stated again after it was ${endState(current, ctx.now)}` : 'new preference', next: this.fresh(id, fresh, input, ctx.now) };
      }
      if (current.kind !== 'preference' || current.sourceKeys.includes(sourceKey)) return null;
      const weight = Math.min(MAX_PREFERENCE_WEIGHT, current.weight + 1);
      return { action: 'reinforce', reason: `stated again (weight ${current.weight} -> ${weight})`, next: { ...refreshedDoc(current, input, ctx.now), weight } };
    });
    const superseded = await this.resolveContradictions(id, input, ctx);
    return { outcome: outcomeOf(action), memoryId: id, superseded };
  }

  private async resolveContradictions(id: string, input: PreferenceInput, ctx: WriteContext): Promise<string[]> {
    const self = await this.get(id);
    if (!self || self.kind !== 'preference' || !isLive(self, ctx.now)) return [];
    const opposite = input.polarity === 'prefers' ? 'avoids' : 'prefers';
    const alternatives: Filter<StoredMemory>[] = [{ statement: input.statement, polarity: opposite }];
    if (input.topic) alternatives.push({ topic: input.topic });
    const { memories: others } = this.parseAll(
      await this.collections.memories.find(this.scoped({ kind: 'preference', status: 'active', _id: { $ne: id }, $or: alternatives })).toArray(),
    );
    const superseded: string[] = [];
    for (const candidate of others) {
      if (candidate.kind !== 'preference' || !isLive(candidate, ctx.now)) continue;
      const contradicts =
        (candidate.statement === input.statement && candidate.polarity !== input.polarity) ||
        (input.topic !== undefined && candidate.topic === input.topic && candidate.polarity === 'prefers' && input.polarity === 'prefers' && candidate.statement !== input.statement);
      if (!contradicts) continue;
      // The later statement wins; an older one reprocessed late is the one superseded.
      const [loser, winner] = candidate.statedAt > self.statedAt ? [id, candidate._id] : [candidate._id, id];
      if (await this.supersede(loser, winner, ctx)) superseded.push(loser);
      if (loser === id) break;
    }
    return superseded;
  }

  /** Marks a memory superseded by another; false when it was not active. */
  async supersede(id: string, byId: string, ctx: WriteContext): Promise<boolean> {
    const action = await this.write(id, ctx, (current) => {
      if (!current || current.status !== 'active') return null;
      return { action: 'supersede', reason: `contradicted by ${byId}`, next: { ...current, status: 'superseded', supersededBy: byId, updatedAt: ctx.now } };
    });
    return action !== null;
  }

  /** Adds a short-lived intent, or extends the expiry of the same one stated again. */
  async addIntent(input: IntentInput, ctx: WriteContext): Promise<WriteResult> {
    const id = memoryIdFor(this.nsKey, { kind: 'intent', statement: input.statement });
    const sourceKey = sourceKeyOf(input.source);
    const action = await this.write(id, ctx, (current) => {
      if (!current || !isLive(current, ctx.now)) {
        if (current && !newerThanEnd(input, current, ctx.now)) return null;
        return { action: 'create', reason: current ? `stated again after it was ${endState(current, ctx.now)}` : 'new intent', next: this.fresh(id, { kind: 'intent', statement: input.statement }, input, ctx.now) };
      }
      if (current.sourceKeys.includes(sourceKey)) return null;
      // Restated in other words: recall ranks the memory by the vector of its text, so the vector goes with the text.
      const reworded = input.text !== current.text ? { embedding: toFloat32(input.embedding), embedderId: input.embedderId } : {};
      return { action: 'reinforce', reason: 'stated again; expiry extended', next: { ...refreshedDoc(current, input, ctx.now), text: input.text, ...reworded } };
    });
    return { outcome: outcomeOf(action), memoryId: id, superseded: [] };
  }

  /** Deletes a memory at the user's request: it leaves recall, its audit stays. False when there was nothing to delete. */
  async delete(id: string, reason: string, ctx: WriteContext): Promise<MemoryDoc | null> {
    const seen: { before: MemoryDoc | null } = { before: null };
    const action = await this.write(id, ctx, (current) => {
      seen.before = current;
      if (!current || current.status === 'deleted') return null;
      return { action: 'delete', reason, next: { ...current, status: 'deleted', updatedAt: ctx.now } };
    });
    return action === null ? null : seen.before;
  }

  /** Removes the content of one memory that ended at or before `endedBefore`; used by the purge sweep. */
  purge(id: string, now: Date, endedBefore: Date): Promise<boolean> {
    return this.writer.purge(id, now, endedBefore);
  }

  /** Bumps the generation with no memory changed, so every worker reads the namespace again. */
  async invalidateCachedCopies(now: Date): Promise<void> {
    await this.writer.invalidateCopies(now);
  }

  /**
   * Replaces an active memory's vector with one from another embedder, when
   * its text is still the text that was embedded (a write in between wins:
   * it brought its own vector). Audited as `reembed`; content and times
   * unchanged. Returns whether it wrote.
   */
  async reembed(id: string, text: string, vector: ArrayLike<number>, embedderId: string, now: Date, options: { rewriteForm?: boolean } = {}): Promise<boolean> {
    // rewriteForm: the vector is already this embedder's, stored in the older bare-bytes form; written again as a BSON vector.
    const sameEmbedder = options.rewriteForm === true;
    const action = await this.write(id, { actor: { by: 'maintenance' }, now }, (current) => {
      if (!current || current.status !== 'active' || current.text !== text || (current.embedderId === embedderId) !== sameEmbedder) return null;
      const reason = sameEmbedder ? `vector of ${embedderId} stored again as a BSON vector` : `re-embedded from ${current.embedderId} to ${embedderId}`;
      return { action: 'reembed', reason, next: { ...current, embedding: toFloat32(vector), embedderId } };
    });
    return action !== null;
  }

  /** Marks one memory expired when its time has come; used by the sweep. */
  async expire(id: string, now: Date): Promise<boolean> {
    const action = await this.write(id, { actor: { by: 'sweep' }, now }, (current) => {
      if (!current || current.status !== 'active' || current.expiresAt > now) return null;
      return { action: 'expire', reason: `expired at ${current.expiresAt.toISOString()}`, next: { ...current, status: 'expired', updatedAt: now } };
    });
    return action !== null;
  }

  /**
   * Inserts many new memories at once (imports, benchmarks, test fixtures):
   * one insertMany, one audit entry each, one generation bump.
   */
  async importMany(docs: Array<{ kind: 'fact'; input: FactInput } | { kind: 'preference'; input: PreferenceInput } | { kind: 'intent'; input: IntentInput }>, now: Date): Promise<string[]> {
    const change: MemoryChange = { action: 'create', reason: 'imported', before: null, at: now, actor: { by: 'import' } };
    const built = docs.map((d) => {
      switch (d.kind) {
        case 'fact':
          return this.fresh(memoryIdFor(this.nsKey, { kind: 'fact', key: d.input.key }), { kind: 'fact', key: d.input.key, subject: d.input.subject, predicate: d.input.predicate, value: d.input.value }, d.input, now);
        case 'preference':
          return this.fresh(
            memoryIdFor(this.nsKey, { kind: 'preference', statement: d.input.statement, polarity: d.input.polarity }),
            { kind: 'preference', statement: d.input.statement, polarity: d.input.polarity, weight: 1, ...(d.input.topic ? { topic: d.input.topic } : {}) },
            d.input,
            now,
          );
        case 'intent':
          return this.fresh(memoryIdFor(this.nsKey, { kind: 'intent', statement: d.input.statement }), { kind: 'intent', statement: d.input.statement }, d.input, now);
      }
    });
    await this.writer.insertNew(built, change);
    return built.map((d) => d._id);
  }
}

function outcomeOf(action: AuditAction | null): WriteOutcome {
  switch (action) {
    case 'create':
      return 'created';
    case 'overwrite':
      return 'overwritten';
    case 'reinforce':
      return 'reinforced';
    default:
      return 'unchanged';
  }
}

/** A regex matching `text` literally (every metacharacter escaped; valid for MongoDB and FerretDB alike). */
export function literalPattern(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|]/g, '\\$&');
}

/** Active and not yet past its expiry: what recall may return. */
export function isLive(doc: MemoryDoc, now: Date): boolean {
  return doc.status === 'active' && doc.expiresAt > now;
}

function endState(doc: MemoryDoc, now: Date): string {
  return doc.status === 'active' && doc.expiresAt <= now ? 'expired' : doc.status;
}

/**
 * A memory that ended (deleted, superseded, expired) comes back only from a
 * statement made after it ended, so reprocessing an old turn cannot undo a
 * "forget that".
 */
function newerThanEnd(input: VersionFields, doc: MemoryDoc, now: Date): boolean {
  const endedAt = doc.status === 'active' && doc.expiresAt <= now ? doc.expiresAt : doc.updatedAt;
  return input.statedAt > endedAt;
}

export { viewOf };
