import { Binary, type Db, type Filter } from 'mongodb';
import { embedMemories, type Embedder } from './embedder';
import type { StoredMemory } from './memory-docs';
import { MemoryRepository } from './memory-repository';
import { MEMORIES_COLLECTION } from './memory-store';
import { decodeEmbedding, MemoryNamespace } from './memory-types';

/**
 * Re-embedding: when the configured embedder changes, every active memory's
 * vector is computed again from its text with the new embedder and written in
 * place (audited as `reembed`, content and times unchanged).
 *
 * - Resumable: a checkpoint in `memory_maintenance` (`_id` `reembed:<embedder
 *   id>`) holds the last memory id handled and the counts so far; a run that
 *   was killed continues after that id. Memories are visited in `_id` order.
 * - Idempotent per memory: the write happens only while the memory still has
 *   another embedder's vector and the text that was embedded, so running it
 *   twice, or two runs at once, never writes a memory twice (the second run
 *   counts it as skipped).
 * - The old vector is not kept: the text is the source, and going back means
 *   running the job again with the old embedder. Until a memory is done,
 *   recall leaves it out (its vector is of another model) and counts it in
 *   `skipped.otherEmbedder`.
 */

export const MEMORY_MAINTENANCE_COLLECTION = 'memory_maintenance';

export interface ReembedCounts {
  /** Written with the embedder's vector (including memories already of the embedder whose vector was in the older storage form). */
  reembedded: number;
  /** Already under the embedder (done by an earlier run, or written by a worker that has it), past its expiry, or changed meanwhile. */
  skipped: number;
  failed: number;
}

interface NamespaceCounts extends ReembedCounts {
  ns: string;
}

/** The stored checkpoint of one embedder's re-embed. */
export interface ReembedCheckpoint {
  _id: string;
  embedderId: string;
  state: 'running' | 'done';
  startedAt: Date;
  updatedAt: Date;
  finishedAt?: Date;
  /** The last memory `_id` handled; the next batch starts after it. */
  cursor: string | null;
  /** Active memories when the job began: each is visited once. */
  total: number;
  counts: ReembedCounts;
  perNamespace: NamespaceCounts[];
  /** Memories after `cursor` already handled and counted (a run stopped mid-batch): not counted again. */
  handledAhead?: string[];
  /** The first failures, for the report. */
  failures: Array<{ id: string; error: string }>;
  /** Working time summed over every run of this job (a killed run's last batch excepted). */
  elapsedMs: number;
  runs: number;
}

export interface ReembedProgress {
  done: number;
  total: number;
  counts: ReembedCounts;
  /** Memories per second in this run. */
  rate: number;
}

/** What a run reports when it stops: the JSON line the script prints. */
export interface ReembedReport extends ReembedCounts {
  embedderId: string;
  total: number;
  /** True when every memory was visited; false when the run was aborted (the checkpoint holds where). */
  complete: boolean;
  /** This run continued a checkpoint left by an earlier one. */
  resumed: boolean;
  perNamespace: Record<string, ReembedCounts>;
  failures: Array<{ id: string; error: string }>;
  /** Working time over every run of this job. */
  ms: number;
}

export interface ReembedOptions {
  embedder: Embedder;
  /** Texts per embedder call and per checkpoint (default 64). */
  batchSize?: number;
  /** Stops after the memories being written; the checkpoint says where to continue. */
  signal?: AbortSignal;
  onProgress?: (progress: ReembedProgress) => void;
  /** Forget a running checkpoint and start again from the first memory. */
  restart?: boolean;
  clock?: () => Date;
}

const MAX_FAILURES_KEPT = 50;
const PARALLEL_NAMESPACES = 4;

async function inParallel<T>(items: T[], limit: number, run: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await run(items[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

export function checkpointId(embedderId: string): string {
  return `reembed:${embedderId}`;
}

/** Re-embeds every active memory whose vector is not of `options.embedder`, resuming a run that stopped. */
export async function reembedMemories(db: Db, options: ReembedOptions): Promise<ReembedReport> {
  const { embedder } = options;
  const clock = options.clock ?? (() => new Date());
  const batchSize = options.batchSize ?? 64;
  const memories = db.collection<StoredMemory>(MEMORIES_COLLECTION);
  const checkpoints = db.collection<ReembedCheckpoint>(MEMORY_MAINTENANCE_COLLECTION);
  const repo = new MemoryRepository(db);
  // Every active memory is visited once per job, in `_id` order; those already under the embedder are counted as skipped.
  const active: Filter<StoredMemory> = { status: 'active' };

  const existing = await checkpoints.findOne({ _id: checkpointId(embedder.id) });
  const resumed = !options.restart && existing?.state === 'running';
  const checkpoint: ReembedCheckpoint = resumed
    ? { ...existing, runs: existing.runs + 1 }
    : {
        _id: checkpointId(embedder.id),
        embedderId: embedder.id,
        state: 'running',
        startedAt: clock(),
        updatedAt: clock(),
        cursor: null,
        total: await memories.countDocuments(active),
        counts: { reembedded: 0, skipped: 0, failed: 0 },
        perNamespace: [],
        failures: [],
        elapsedMs: 0,
        runs: 1,
      };
  const perNamespace = new Map(checkpoint.perNamespace.map((c) => [c.ns, c]));
  const count = (ns: string, what: keyof ReembedCounts) => {
    checkpoint.counts[what]++;
    const entry = perNamespace.get(ns) ?? { ns, reembedded: 0, skipped: 0, failed: 0 };
    entry[what]++;
    perNamespace.set(ns, entry);
  };
  const save = async (runStarted: number) => {
    checkpoint.perNamespace = [...perNamespace.values()];
    checkpoint.updatedAt = clock();
    const saved = { ...checkpoint, elapsedMs: checkpoint.elapsedMs + (performance.now() - runStarted) };
    await checkpoints.replaceOne({ _id: checkpoint._id }, saved, { upsert: true });
    return saved;
  };

  const runStarted = performance.now();
  let handledThisRun = 0;
  let complete = false;
  let saved = await save(runStarted);
  while (!options.signal?.aborted) {
    const batch = await memories
      .find(checkpoint.cursor === null ? active : { ...active, _id: { $gt: checkpoint.cursor } }, {
        projection: { _id: 1, ns: 1, tenant: 1, user: 1, project: 1, text: 1, expiresAt: 1, embedderId: 1, embedding: 1 },
      })
      .sort({ _id: 1 })
      .limit(batchSize)
      .toArray();
    if (batch.length === 0) {
      complete = true;
      break;
    }
    const now = clock();
    const live = (m: (typeof batch)[number]) => m.expiresAt instanceof Date && m.expiresAt > now;
    const todo = batch.filter((m) => m.embedderId !== embedder.id && live(m));
    // Already this embedder's, but in the older bare-bytes form that Atlas does not index: the same vector, stored again.
    const oldForm = new Map(
      batch
        .filter((m) => m.embedderId === embedder.id && live(m) && m.embedding instanceof Binary && m.embedding.sub_type !== Binary.SUBTYPE_VECTOR)
        .map((m) => [String(m._id), decodeEmbedding(m.embedding as Binary)]),
    );
    let vectors: number[][] | null = null;
    let embedError = '';
    try {
      vectors = todo.length === 0 ? [] : await embedMemories(embedder, todo.map((m) => String(m.text)), { signal: options.signal });
      if (vectors.length !== todo.length) throw new Error(`the embedder returned ${vectors.length} vectors for ${todo.length} texts`);
    } catch (err) {
      if (options.signal?.aborted) break;
      vectors = null;
      embedError = err instanceof Error ? err.message : String(err);
    }
    const vectorOf = new Map(todo.map((m, i) => [String(m._id), vectors?.[i]]));
    const handled = new Set<string>();
    const countedBefore = new Set(checkpoint.handledAhead ?? []);
    const handle = async (raw: (typeof batch)[number]) => {
      const id = String(raw._id);
      const ns = String(raw.ns);
      if (countedBefore.has(id)) {
        handled.add(id);
        return;
      }
      const fail = (error: string) => {
        count(ns, 'failed');
        if (checkpoint.failures.length < MAX_FAILURES_KEPT) checkpoint.failures.push({ id, error });
      };
      const namespace = MemoryNamespace.safeParse({ tenant: raw.tenant, user: raw.user, ...(raw.project ? { project: raw.project } : {}) });
      const rewrite = oldForm.get(id);
      const vector = rewrite ?? vectorOf.get(id);
      if (!vectorOf.has(id) && !rewrite) count(ns, 'skipped');
      else if (!vector) fail(embedError || 'no vector');
      else if (!namespace.success) fail('the document names no valid namespace');
      else {
        try {
          const wrote = await repo.forNamespace(namespace.data).reembed(id, String(raw.text), vector, embedder.id, now, { rewriteForm: rewrite !== undefined });
          count(ns, wrote ? 'reembedded' : 'skipped');
        } catch (err) {
          fail(err instanceof Error ? err.message : String(err));
        }
      }
      handled.add(id);
      handledThisRun++;
    };
    // Writes to one namespace are serialized by the store; namespaces go in parallel, a few at a time.
    const byNamespace = new Map<string, typeof batch>();
    for (const raw of batch) byNamespace.set(String(raw.ns), [...(byNamespace.get(String(raw.ns)) ?? []), raw]);
    const groups = [...byNamespace.values()];
    await inParallel(groups, PARALLEL_NAMESPACES, async (group) => {
      for (const raw of group) {
        if (options.signal?.aborted) return;
        await handle(raw);
      }
    });
    // The cursor moves past the longest run of handled memories from the start of the batch: an aborted batch resumes at its first gap.
    const firstGap = batch.findIndex((raw) => !handled.has(String(raw._id)));
    const prefix = firstGap === -1 ? batch : batch.slice(0, firstGap);
    if (prefix.length > 0) checkpoint.cursor = String(prefix[prefix.length - 1]!._id);
    const inBatch = new Set(batch.map((raw) => String(raw._id)));
    checkpoint.handledAhead = [
      ...(firstGap === -1 ? [] : batch.slice(firstGap).map((raw) => String(raw._id)).filter((id) => handled.has(id))),
      ...[...countedBefore].filter((id) => !inBatch.has(id)),
    ];
    saved = await save(runStarted);
    const seconds = (performance.now() - runStarted) / 1000;
    const { reembedded, skipped, failed } = checkpoint.counts;
    options.onProgress?.({ done: reembedded + skipped + failed, total: checkpoint.total, counts: { ...checkpoint.counts }, rate: seconds > 0 ? handledThisRun / seconds : 0 });
  }
  if (complete) {
    checkpoint.state = 'done';
    checkpoint.finishedAt = clock();
    saved = await save(runStarted);
  }
  return {
    embedderId: embedder.id,
    total: saved.total,
    ...saved.counts,
    complete,
    resumed,
    perNamespace: Object.fromEntries(saved.perNamespace.map(({ ns, ...counts }) => [ns, counts])),
    failures: saved.failures,
    ms: Math.round(saved.elapsedMs),
  };
}
