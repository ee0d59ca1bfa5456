import type { ScopedMemories } from './memory-repository';
import type { MemoryLog } from './memory-log';
import type { MemoryDoc, MemoryDocError, MemoryKind } from './memory-types';
import { subscribeToNamespaceChanges, type NamespaceChange, type NamespaceChangeListener } from './namespace-changes';
import { decodeRecallCopy, encodeRecallCopy, recallUnit, RecallCopyError, type RecallCopy } from './recall-copy';

/** What recall needs of one memory, decoded once per load. */
export interface RecallEntry {
  id: string;
  kind: MemoryKind;
  text: string;
  /** The embedding scaled to length 1, so scoring is a dot product (dense ones rounded to int8 steps, `recallUnit`). */
  unit: Float32Array;
  /** For a dense vector: the step its components are whole multiples of (what the stored copy keeps as int8). */
  scale?: number;
  embedderId: string;
  weight: number;
  origin: 'user' | 'tool_confirmed';
  createdAt: Date;
  updatedAt: Date;
  expiresAt: Date;
}

export interface NamespaceResult<T> {
  value: T;
  malformed: MemoryDocError[];
  generation: number;
  /** Served from this worker's memory, without reading the namespace or its stored copy. */
  fromCache: boolean;
}

function entryOf(m: MemoryDoc): RecallEntry {
  const { unit, scale } = recallUnit(m.embedding);
  return {
    id: m._id,
    kind: m.kind,
    text: m.text,
    unit,
    ...(scale === undefined ? {} : { scale }),
    embedderId: m.embedderId,
    weight: m.kind === 'preference' ? m.weight : 1,
    origin: m.source.origin === 'user' ? 'user' : 'tool_confirmed',
    createdAt: m.createdAt,
    updatedAt: m.updatedAt,
    expiresAt: m.expiresAt,
  };
}

interface CacheSlot extends RecallCopy {
  /** The namespace, to refresh and store the copy with. */
  scope: ScopedMemories;
  /** When this worker read the namespace in full or took the stored copy: its age starts there. */
  trustedSince: number;
}

export interface RecallCacheOptions {
  /** Namespaces kept per worker; the least recently used is evicted first. */
  maxNamespaces?: number;
  /**
   * A copy this worker has held (since its full read, or since it took the
   * stored copy) for longer than this is read again in the background: a
   * writer that died before bumping the generation, or an increment FerretDB
   * lost between workers, is seen then.
   */
  maxAgeMs?: number;
  clock?: () => number;
  /** Store each namespace's copy in MongoDB for workers that start cold (default true). */
  storeCopies?: boolean;
  log?: MemoryLog;
}

/**
 * Per-worker cache of each namespace's recall set. On FerretDB every query
 * but an `_id` lookup is a scan of the collection, so reading a namespace's
 * memories costs far more than the 20 ms a turn can spare; the cache keeps
 * them decoded in memory and asks MongoDB only for the namespace's
 * generation, one tiny document that every write bumps. A write on any
 * worker therefore invalidates every worker's copy on its next recall.
 * Expiry is checked per entry at query time, so a cached memory past its
 * `expiresAt` is never returned.
 *
 * A worker without a copy (it just started) reads the namespace's stored
 * copy (`recall-copy.ts`, one `_id` lookup) alongside the generation, and
 * uses it when its generation is current; only otherwise does it read the
 * namespace in full, and then it stores the copy. Its own writes patch the
 * copy in memory and store it again before the write returns.
 */
export class RecallCache implements NamespaceChangeListener {
  private readonly slots = new Map<string, CacheSlot>();
  private readonly refreshing = new Map<string, Promise<void>>();
  private readonly maxNamespaces: number;
  private readonly maxAgeMs: number;
  private readonly clock: () => number;
  private readonly storeCopies: boolean;
  private readonly log: MemoryLog | undefined;
  private readonly unsubscribe: () => void;

  constructor(options: RecallCacheOptions = {}) {
    this.maxNamespaces = options.maxNamespaces ?? 256;
    this.maxAgeMs = options.maxAgeMs ?? 60_000;
    this.clock = options.clock ?? Date.now;
    this.storeCopies = options.storeCopies ?? true;
    this.log = options.log;
    this.unsubscribe = subscribeToNamespaceChanges(this);
  }

  /**
   * A write made by this process: applied in place when it is the very next
   * generation of the cached copy, and the copy stored again. Anything else
   * (a write by another worker in between, events out of order) leaves the
   * copy behind its generation, so the next recall reloads it.
   */
  async onNamespaceChange(change: NamespaceChange): Promise<void> {
    const slot = this.slots.get(change.cacheKey);
    if (!slot || slot.generation !== change.generation - 1) return;
    const byId = new Map(slot.entries.map((e) => [e.id, e]));
    for (const doc of change.changed) {
      if (doc.status === 'active') byId.set(doc._id, entryOf(doc));
      else byId.delete(doc._id);
    }
    slot.entries = [...byId.values()];
    slot.generation = change.generation;
    await this.store(slot);
  }

  /** Stops listening to this process's writes. */
  close(): void {
    this.unsubscribe();
    this.slots.clear();
  }

  /**
   * Runs `compute` over the namespace's current recall set, with what
   * `prepared` resolves to (the query's scorer). `generation` is the
   * namespace's generation read, already in flight: while it travels,
   * `compute` runs on the cached copy, and that result is kept when the
   * generation confirms the copy is current. A stale or missing copy is
   * replaced by the stored copy when that one is current, else by a full
   * read, and computed again.
   */
  async compute<P, T>(
    scope: ScopedMemories,
    now: Date,
    generation: Promise<number>,
    prepared: Promise<P>,
    compute: (entries: RecallEntry[], prepared: P) => T,
  ): Promise<NamespaceResult<T>> {
    const key = scope.cacheKey;
    // A worker with no copy at all asks for the stored one at once, alongside the generation and the embedding.
    const stored = this.slots.has(key) ? undefined : this.readStored(scope);
    const input = await prepared;
    const slot = this.slots.get(key);
    const speculative = slot ? { generation: slot.generation, malformed: slot.malformed, value: compute(slot.entries, input) } : undefined;
    const current = await generation;
    if (current === 0) return { value: compute([], input), malformed: [], generation: current, fromCache: true };
    if (speculative && speculative.generation === current) {
      this.use(key, now);
      return { value: speculative.value, malformed: speculative.malformed, generation: current, fromCache: true };
    }
    // This process's own write may have patched the copy up to the generation just read.
    const patched = this.slots.get(key);
    if (patched && patched.generation === current) {
      this.use(key, now);
      return { value: compute(patched.entries, input), malformed: patched.malformed, generation: current, fromCache: true };
    }
    const copy = await (stored ?? this.readStored(scope));
    if (copy && copy.generation === current) {
      this.install({ ...copy, scope, trustedSince: this.clock() });
      this.use(key, now);
      return { value: compute(copy.entries, input), malformed: copy.malformed, generation: current, fromCache: false };
    }
    const loaded = await this.readInFull(scope, now, current);
    return { value: compute(loaded.entries, input), malformed: loaded.malformed, generation: current, fromCache: false };
  }

  /** Reads the namespace's active, unexpired memories, keeps them under `generation` (read before) and stores the copy. */
  private async readInFull(scope: ScopedMemories, now: Date, generation: number): Promise<CacheSlot> {
    const loadedAt = this.clock();
    const { memories, malformed } = await scope.loadActive(now);
    // Kept under the generation read before loading: a write that lands in
    // between bumps past it, so the next recall reloads rather than trusting a mix.
    const slot: CacheSlot = { scope, generation, loadedAt, trustedSince: loadedAt, entries: memories.map(entryOf), malformed };
    if (this.install(slot)) await this.store(slot);
    return slot;
  }

  /** The stored copy, or undefined when there is none or it cannot be used (then recall reads in full and replaces it). */
  private async readStored(scope: ScopedMemories): Promise<RecallCopy | undefined> {
    if (!this.storeCopies) return undefined;
    try {
      const raw = await scope.readRecallCopy();
      return raw ? decodeRecallCopy(raw) : undefined;
    } catch (err) {
      if (err instanceof RecallCopyError) this.log?.warn('stored recall copy ignored; reading the namespace in full', { error: err.message });
      // Otherwise MongoDB failed; the generation read and the full read report that.
      return undefined;
    }
  }

  /** Stores a copy for other and restarted workers; a failure costs them a full read, never this recall. */
  private async store(slot: CacheSlot): Promise<void> {
    if (!this.storeCopies) return;
    const doc = encodeRecallCopy(slot, new Date(this.clock()));
    if (!doc) return;
    try {
      await slot.scope.writeRecallCopy(doc);
    } catch (err) {
      this.log?.warn('could not store the recall copy', { error: err instanceof Error ? err.message : String(err) });
    }
  }

  /**
   * Keeps a copy unless this worker already holds a newer generation of the
   * namespace; evicts the least recently used beyond the limit.
   */
  private install(slot: CacheSlot): boolean {
    const key = slot.scope.cacheKey;
    const existing = this.slots.get(key);
    if (existing && existing.generation > slot.generation) return false;
    this.slots.delete(key);
    this.slots.set(key, slot);
    while (this.slots.size > this.maxNamespaces) {
      const oldest = this.slots.keys().next().value;
      if (oldest === undefined) break;
      this.slots.delete(oldest);
    }
    return true;
  }

  /**
   * Marks a slot most recently used. One this worker has held for longer
   * than the maximum age is read again in the background, one read per
   * namespace at a time; recalls use the current copy meanwhile. (Counted
   * from when the worker took a stored copy, not from the full read the copy
   * descends from: after a restart every copy is old, and rereading each at
   * once would put a burst of full reads, collection scans on FerretDB, on
   * the server just as the worker starts answering.)
   */
  private use(key: string, now: Date): void {
    const slot = this.slots.get(key);
    if (!slot) return;
    this.slots.delete(key);
    this.slots.set(key, slot);
    if (this.clock() - slot.trustedSince < this.maxAgeMs || this.refreshing.has(key)) return;
    const refresh = (async () => {
      const generation = await slot.scope.generation();
      if (generation > 0) await this.readInFull(slot.scope, now, generation);
    })()
      .catch((err: unknown) => this.log?.warn('background recall reload failed', { error: err instanceof Error ? err.message : String(err) }))
      .finally(() => this.refreshing.delete(key));
    this.refreshing.set(key, refresh);
  }

  /** Waits for background reloads started so far (tests, benchmarks, shutdown). */
  async settled(): Promise<void> {
    await Promise.all([...this.refreshing.values()]);
  }

  /** Drops one namespace (or all) from this worker's cache. */
  invalidate(cacheKey?: string): void {
    if (cacheKey === undefined) this.slots.clear();
    else this.slots.delete(cacheKey);
  }
}
