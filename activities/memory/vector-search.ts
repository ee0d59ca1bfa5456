import { MongoServerError, type Collection, type Document } from 'mongodb';
import { z } from 'zod';
import type { MemoryLog } from './memory-log';
import { MemoryKind } from './memory-types';
import type { ScoredMemory } from './recall';

/**
 * Recall through MongoDB Atlas Vector Search. With `$vectorSearch` the server
 * ranks the namespace's vectors and returns the nearest few, so a worker never
 * loads a large namespace into memory. FerretDB and a self-managed `mongod`
 * have no such stage: there recall ranks in the worker (recall-cache.ts), as
 * before. Which one a worker uses is decided once per worker (`VectorSearchProbe`).
 *
 * Not exercised against a real Atlas cluster (none is reachable here): the
 * pipeline and index definition follow the Atlas documentation, the result
 * mapping is unit-tested against a response of the documented shape, and the
 * fallback is tested against FerretDB's real error.
 */

export type VectorSearchSetting = 'auto' | 'atlas' | 'local';
export type RecallPath = 'atlas' | 'local';

/** The path that holds each memory's vector: a BSON float32 vector (Binary subtype 9), the form Atlas indexes. */
export const VECTOR_PATH = 'embedding';

/**
 * The Atlas Vector Search index on `memories`. One index has one vector
 * length: after re-embedding to a model of another length, create it again
 * with the new `numDimensions`. The filter fields are the ones every recall
 * filters on (`vectorSearchPipeline`).
 */
export function vectorIndexDefinition(name: string, numDimensions: number): { name: string; type: 'vectorSearch'; definition: Document } {
  return {
    name,
    type: 'vectorSearch',
    definition: {
      fields: [
        { type: 'vector', path: VECTOR_PATH, numDimensions, similarity: 'cosine' },
        { type: 'filter', path: 'ns' },
        { type: 'filter', path: 'embedderId' },
        { type: 'filter', path: 'status' },
        { type: 'filter', path: 'expiresAt' },
      ],
    },
  };
}

export interface VectorSearchQuery {
  index: string;
  nsKey: string;
  embedderId: string;
  queryVector: number[];
  now: Date;
  /** Memories returned. */
  limit: number;
  /** Nearest neighbours the index considers before the limit (Atlas advises 10 to 20 times the limit). */
  numCandidates: number;
}

/**
 * The recall pipeline: only this namespace's live memories with vectors of
 * this embedder are candidates, so two models' vectors are never ranked together.
 */
export function vectorSearchPipeline(q: VectorSearchQuery): Document[] {
  return [
    {
      $vectorSearch: {
        index: q.index,
        path: VECTOR_PATH,
        queryVector: q.queryVector,
        numCandidates: q.numCandidates,
        limit: q.limit,
        filter: { $and: [{ ns: { $eq: q.nsKey } }, { embedderId: { $eq: q.embedderId } }, { status: { $eq: 'active' } }, { expiresAt: { $gt: q.now } }] },
      },
    },
    {
      $project: {
        _id: 1,
        ns: 1,
        kind: 1,
        status: 1,
        text: 1,
        weight: 1,
        embedderId: 1,
        'source.origin': 1,
        createdAt: 1,
        updatedAt: 1,
        expiresAt: 1,
        score: { $meta: 'vectorSearchScore' },
      },
    },
  ];
}

/** How many memories a recall asks Atlas for: enough to fill both tiers after the character caps. */
export function vectorSearchLimits(maxStrong: number, maxWeak: number): { limit: number; numCandidates: number } {
  const limit = Math.max(20, 3 * (maxStrong + maxWeak));
  return { limit, numCandidates: Math.min(10_000, 15 * limit) };
}

const VectorHit = z.object({
  _id: z.string(),
  ns: z.string(),
  kind: MemoryKind,
  status: z.literal('active'),
  text: z.string().min(1),
  weight: z.number().optional(),
  embedderId: z.string(),
  source: z.object({ origin: z.enum(['user', 'tool']) }),
  createdAt: z.date(),
  updatedAt: z.date(),
  expiresAt: z.date(),
  score: z.number().min(0).max(1),
});

export interface MappedHits {
  scored: ScoredMemory[];
  belowWeak: number;
  /** Hits that did not parse, or that another namespace, embedder or state let through: never ranked. */
  rejected: Array<{ id: string; problem: string }>;
}

/**
 * Atlas results as recall's scored memories. For a `cosine` index Atlas
 * reports `(1 + cosine) / 2`; recall's thresholds are calibrated on cosine,
 * so the score is mapped back. Every hit is checked again against the
 * namespace, embedder and expiry the pipeline filtered on.
 */
export function mapVectorHits(docs: unknown[], expect: { nsKey: string; embedderId: string; now: Date; weak: number }): MappedHits {
  const out: MappedHits = { scored: [], belowWeak: 0, rejected: [] };
  for (const doc of docs) {
    const parsed = VectorHit.safeParse(doc);
    const id = String((doc as { _id?: unknown } | null)?._id ?? '(no _id)');
    if (!parsed.success) {
      out.rejected.push({ id, problem: parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ') });
      continue;
    }
    const hit = parsed.data;
    if (hit.ns !== expect.nsKey || hit.embedderId !== expect.embedderId || hit.expiresAt <= expect.now) {
      out.rejected.push({ id, problem: 'outside the namespace, embedder or expiry asked for' });
      continue;
    }
    const similarity = 2 * hit.score - 1;
    // Exactly 0 shares nothing (another script's memory under the default embedder), even where weak is set at or below 0.
    if (similarity < expect.weak || similarity === 0) {
      out.belowWeak++;
      continue;
    }
    out.scored.push({
      id: hit._id,
      kind: hit.kind,
      text: hit.text,
      similarity,
      weight: hit.kind === 'preference' ? (hit.weight ?? 1) : 1,
      createdAt: hit.createdAt,
      updatedAt: hit.updatedAt,
      origin: hit.source.origin === 'user' ? 'user' : 'tool_confirmed',
    });
  }
  return out;
}

/** An error that says the server has no Atlas Search: the stage or the command is unknown or not enabled. */
export function isUnsupportedSearch(err: unknown): boolean {
  if (!(err instanceof MongoServerError)) return false;
  // 40324: mongod's unrecognized stage; 40234: FerretDB's; 31082: SearchNotEnabled on a mongod without Atlas Search;
  // 115: CommandNotSupported; 59: CommandNotFound (FerretDB's answer to createSearchIndexes).
  return [40324, 40234, 31082, 115, 59].includes(Number(err.code)) || /unrecognized pipeline stage|no such command|search.*not (enabled|supported)|only supported (on|with) atlas/i.test(err.message);
}

/**
 * Decides, once per worker, whether recall goes to Atlas. `auto` asks the
 * server for the index (`$listSearchIndexes`): a server without Atlas Search
 * refuses the stage, and an Atlas cluster without the index, or with one not
 * yet queryable, would answer every `$vectorSearch` with nothing, so both
 * mean the local path. `atlas` skips the probe. A later unsupported-search
 * error from a recall switches the worker to the local path for good.
 */
export class VectorSearchProbe {
  private decided: Promise<RecallPath> | undefined;

  constructor(
    private readonly memories: Collection<Document>,
    private readonly setting: VectorSearchSetting,
    private readonly index: string,
    private readonly log?: MemoryLog,
  ) {}

  path(): Promise<RecallPath> {
    if (this.setting === 'local') return Promise.resolve('local');
    if (this.setting === 'atlas') return (this.decided ??= Promise.resolve('atlas'));
    this.decided ??= this.probe().catch((err: unknown) => {
      // Not an answer from the server (it is unreachable, say): local for now, asked again next time.
      this.decided = undefined;
      this.log?.warn('vector search probe failed; ranking in the worker for now', { error: err instanceof Error ? err.message : String(err) });
      return 'local' as const;
    });
    return this.decided;
  }

  /** A recall's `$vectorSearch` failed as unsupported: the local path from now on. */
  fallBack(err: unknown): void {
    this.log?.warn('$vectorSearch is not available; recall ranks in the worker from now on', { error: err instanceof Error ? err.message : String(err) });
    this.decided = Promise.resolve('local');
  }

  private async probe(): Promise<RecallPath> {
    let indexes: Document[];
    try {
      indexes = await this.memories.aggregate([{ $listSearchIndexes: { name: this.index } }]).toArray();
    } catch (err) {
      if (!isUnsupportedSearch(err) && !(err instanceof MongoServerError)) throw err;
      // The usual case off Atlas (FerretDB, mongod), and since the probe runs as the worker starts, not worth a warning.
      this.log?.debug('the MongoDB server has no Atlas Vector Search; recall ranks in the worker', { error: (err as Error).message });
      return 'local';
    }
    const index = indexes.find((i) => i.name === this.index);
    if (!index || (index.queryable !== true && index.status !== 'READY')) {
      this.log?.warn('Atlas Vector Search index missing or not queryable; recall ranks in the worker', { index: this.index, status: index?.status ?? 'missing' });
      return 'local';
    }
    return 'atlas';
  }
}
