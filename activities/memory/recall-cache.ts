import { unitVector } from './recall';
import type { ScopedMemories } from './memory-repository';
import type { MemoryDoc, MemoryDocError, MemoryKind } from './memory-types';
import { subscribeToNamespaceChanges, type NamespaceChange, type NamespaceChangeListener } from './namespace-changes';

/** What recall needs of one memory, decoded once per load. */
export interface RecallEntry {
  id: string;
  kind: MemoryKind;
  text: string;
  /** The embedding scaled to length 1, so scoring is a dot product. */
  unit: Float32Array;
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
  fromCache: boolean;
}

function entryOf(m: MemoryDoc): RecallEntry {
  return {
    id: m._id,
    kind: m.kind,
    text: m.text,
    unit: unitVector(m.embedding),
    embedderId: m.embedderId,
    weight: m.kind === 'preference' ? m.weight : 1,
    origin: m.source.origin === 'user' ? 'user' : 'tool_confirmed',
    createdAt: m.createdAt,
    updatedAt: m.updatedAt,
    expiresAt: m.expiresAt,
  };
}

interface CacheSlot {
  generation: number;
  loadedAt: number;
  entries: RecallEntry[];
  malformed: MemoryDocError[];
}

export interface RecallCacheOptions {
  /** Namespaces kept per worker; the least recently used is evicted first. */
  maxNamespaces?: number;
  /** A slot older than this is reloaded even if the generation did not move (a writer that died before bumping it). */
  maxAgeMs?: number;
  clock?: () => number;
}

/**
 * Per-worker cache of each namespace's recall set. On FerretDB every query is
 * a scan of the collection, so loading a namespace's memories costs far more
 * than the 20 ms a turn can spare; the cache keeps them decoded in memory and
 * asks MongoDB only for the namespace's generation, one tiny document that
 * every write bumps. A write on any worker therefore invalidates every
 * worker's copy on its next recall. Expiry is checked per entry at query
 * time, so a cached memory past its `expiresAt` is never returned.
 */
export class RecallCache implements NamespaceChangeListener {
  private readonly slots = new Map<string, CacheSlot>();
  private readonly maxNamespaces: number;
  private readonly maxAgeMs: number;
  private readonly clock: () => number;
  private readonly unsubscribe: () => void;

  constructor(options: RecallCacheOptions = {}) {
    this.maxNamespaces = options.maxNamespaces ?? 256;
    this.maxAgeMs = options.maxAgeMs ?? 60_000;
    this.clock = options.clock ?? Date.now;
    this.unsubscribe = subscribeToNamespaceChanges(this);
  }

  /**
   * A write made by this process: applied in place when it is the very next
   * generation of the cached copy. Anything else (a write by another worker
   * in between, events out of order) leaves the copy behind its generation,
   * so the next recall reloads it.
   */
  onNamespaceChange(change: NamespaceChange): void {
    const slot = this.slots.get(change.nsKey);
    if (!slot || slot.generation !== change.generation - 1) return;
    const byId = new Map(slot.entries.map((e) => [e.id, e]));
    for (const doc of change.changed) {
      if (doc.status === 'active') byId.set(doc._id, entryOf(doc));
      else byId.delete(doc._id);
    }
    slot.entries = [...byId.values()];
    slot.generation = change.generation;
  }

  /** Stops listening to this process's writes. */
  close(): void {
    this.unsubscribe();
    this.slots.clear();
  }

  /**
   * Runs `compute` over the namespace's current recall set. `generation` is
   * the namespace's generation read, already in flight: while it travels,
   * `compute` runs on the cached copy, and that result is kept when the
   * generation confirms the copy is current. A stale or missing copy is
   * (re)loaded and computed again.
   */
  async compute<T>(scope: ScopedMemories, now: Date, generation: Promise<number>, compute: (entries: RecallEntry[]) => T): Promise<NamespaceResult<T>> {
    const slot = this.usable(scope.nsKey);
    const speculative = slot ? { generation: slot.generation, malformed: slot.malformed, value: compute(slot.entries) } : undefined;
    const current = await generation;
    if (current === 0) return { value: compute([]), malformed: [], generation: current, fromCache: true };
    if (speculative && speculative.generation === current) {
      this.touch(scope.nsKey);
      return { value: speculative.value, malformed: speculative.malformed, generation: current, fromCache: true };
    }
    // This process's own write may have patched the copy up to the generation just read.
    const patched = this.usable(scope.nsKey);
    if (patched && patched.generation === current) {
      this.touch(scope.nsKey);
      return { value: compute(patched.entries), malformed: patched.malformed, generation: current, fromCache: true };
    }
    const loadedAt = this.clock();
    const { memories, malformed } = await scope.loadActive(now);
    const entries = memories.map(entryOf);
    // Stored under the generation read before loading: a write that lands in
    // between bumps past it, so the next recall reloads rather than trusting a mix.
    this.slots.delete(scope.nsKey);
    this.slots.set(scope.nsKey, { generation: current, loadedAt, entries, malformed });
    while (this.slots.size > this.maxNamespaces) {
      const oldest = this.slots.keys().next().value;
      if (oldest === undefined) break;
      this.slots.delete(oldest);
    }
    return { value: compute(entries), malformed, generation: current, fromCache: false };
  }

  private usable(nsKey: string): CacheSlot | undefined {
    const slot = this.slots.get(nsKey);
    return slot && this.clock() - slot.loadedAt < this.maxAgeMs ? slot : undefined;
  }

  /** Re-inserts a slot to mark it most recently used. */
  private touch(nsKey: string): void {
    const slot = this.slots.get(nsKey);
    if (!slot) return;
    this.slots.delete(nsKey);
    this.slots.set(nsKey, slot);
  }

  /** Drops one namespace (or all) from this worker's cache. */
  invalidate(nsKey?: string): void {
    if (nsKey === undefined) this.slots.clear();
    else this.slots.delete(nsKey);
  }
}
