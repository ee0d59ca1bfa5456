import { MongoNetworkError, MongoServerError, type Collection, type Document } from 'mongodb';
import {
  isUnsupportedSearch,
  mapVectorHits,
  vectorIndexDefinition,
  vectorSearchLimits,
  vectorSearchPipeline,
  VectorSearchProbe,
} from '../../activities/memory/vector-search';

const now = new Date('2026-03-01T10:00:00Z');
const nsKey = JSON.stringify(['acme', 'ana', null]);
const embedderId = 'local:all-minilm-l6-v2';

/** A hit as Atlas returns it after the pipeline's $project (score = (1 + cosine) / 2 for a cosine index). */
function hit(id: string, score: number, over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    _id: `mem_${id.padStart(24, '0')}`,
    ns: nsKey,
    kind: 'fact',
    status: 'active',
    text: `memory ${id}`,
    embedderId,
    source: { origin: 'user' },
    createdAt: new Date('2026-01-01T00:00:00Z'),
    updatedAt: new Date('2026-02-01T00:00:00Z'),
    expiresAt: new Date('2027-01-01T00:00:00Z'),
    score,
    ...over,
  };
}

const serverError = (code: number, message: string) => new MongoServerError({ code, errmsg: message, message, ok: 0 });

function fakeCollection(answer: () => Promise<Document[]>): { collection: Collection<Document>; calls: Document[][] } {
  const calls: Document[][] = [];
  const collection = { aggregate: (pipeline: Document[]) => (calls.push(pipeline), { toArray: answer }) } as unknown as Collection<Document>;
  return { collection, calls };
}

describe('Atlas vector search: pipeline, index and result mapping', () => {
  it('the pipeline filters on namespace, embedder, live state and expiry, and asks for the score', () => {
    const pipeline = vectorSearchPipeline({ index: 'memory_vectors', nsKey, embedderId, queryVector: [0.1, 0.2], now, limit: 27, numCandidates: 405 });
    expect(pipeline[0]).toEqual({
      $vectorSearch: {
        index: 'memory_vectors',
        path: 'embedding',
        queryVector: [0.1, 0.2],
        numCandidates: 405,
        limit: 27,
        filter: { $and: [{ ns: { $eq: nsKey } }, { embedderId: { $eq: embedderId } }, { status: { $eq: 'active' } }, { expiresAt: { $gt: now } }] },
      },
    });
    expect(pipeline[1]).toMatchObject({ $project: { score: { $meta: 'vectorSearchScore' }, text: 1, 'source.origin': 1 } });
    expect(pipeline[1]!.$project).not.toHaveProperty('embedding');
  });

  it('the index definition indexes the vector for cosine and every field the pipeline filters on', () => {
    const index = vectorIndexDefinition('memory_vectors', 384);
    expect(index).toMatchObject({ name: 'memory_vectors', type: 'vectorSearch' });
    expect(index.definition.fields).toContainEqual({ type: 'vector', path: 'embedding', numDimensions: 384, similarity: 'cosine' });
    const filters = (index.definition.fields as Array<{ type: string; path: string }>).filter((f) => f.type === 'filter').map((f) => f.path);
    const filtered = (vectorSearchPipeline({ index: 'x', nsKey, embedderId, queryVector: [1], now, limit: 1, numCandidates: 1 })[0]!.$vectorSearch.filter.$and as Document[]).map((c) => Object.keys(c)[0]);
    expect(filters.sort()).toEqual([...filtered].sort());
  });

  it('asks for enough candidates to fill both tiers', () => {
    expect(vectorSearchLimits(6, 3)).toEqual({ limit: 27, numCandidates: 405 });
    expect(vectorSearchLimits(0, 0)).toEqual({ limit: 20, numCandidates: 300 });
  });

  it('maps Atlas scores back to cosine, counts what is below the weak threshold, and never ranks a hit outside what was asked', () => {
    const mapped = mapVectorHits(
      [
        hit('1', 0.9), // cosine 0.8
        hit('2', 0.7, { kind: 'preference', weight: 4, source: { origin: 'tool' } }), // cosine 0.4
        hit('3', 0.55), // cosine 0.1: below weak
        hit('4', 0.95, { ns: JSON.stringify(['globex', 'ana', null]) }),
        hit('5', 0.95, { embedderId: 'offline-hash-v1-d256' }),
        hit('6', 0.95, { expiresAt: now }),
        hit('7', 0.95, { text: undefined }),
        { _id: 'junk', score: 'high' },
      ],
      { nsKey, embedderId, now, weak: 0.25 },
    );
    expect(mapped.scored.map((m) => [m.id, Math.round(m.similarity * 1000) / 1000, m.weight, m.origin])).toEqual([
      ['mem_000000000000000000000001', 0.8, 1, 'user'],
      ['mem_000000000000000000000002', 0.4, 4, 'tool_confirmed'],
    ]);
    expect(mapped.belowWeak).toBe(1);
    expect(mapped.rejected.map((r) => r.id)).toEqual([
      'mem_000000000000000000000004',
      'mem_000000000000000000000005',
      'mem_000000000000000000000006',
      'mem_000000000000000000000007',
      'junk',
    ]);
  });

  it('recognises the errors of servers without Atlas Search, and only those', () => {
    expect(isUnsupportedSearch(serverError(40324, "Unrecognized pipeline stage name: '$vectorSearch'"))).toBe(true);
    expect(isUnsupportedSearch(serverError(40234, 'Unrecognized pipeline stage name: "$vectorSearch"'))).toBe(true);
    expect(isUnsupportedSearch(serverError(31082, 'Search index commands are only supported with Atlas.'))).toBe(true);
    expect(isUnsupportedSearch(serverError(13, 'not authorized on db to execute command'))).toBe(false);
    expect(isUnsupportedSearch(new MongoNetworkError('connection reset'))).toBe(false);
  });
});

describe('choosing the recall path once per worker', () => {
  it('auto: a queryable index means Atlas, probed once', async () => {
    const { collection, calls } = fakeCollection(async () => [{ name: 'memory_vectors', status: 'READY', queryable: true }]);
    const probe = new VectorSearchProbe(collection, 'auto', 'memory_vectors');
    expect(await probe.path()).toBe('atlas');
    expect(await probe.path()).toBe('atlas');
    expect(calls).toEqual([[{ $listSearchIndexes: { name: 'memory_vectors' } }]]);
  });

  it('auto: no index or an index still building means local with a warning; a server without search, local with a debug line', async () => {
    for (const [answer, level] of [
      [async () => [], 'warn'],
      [async () => [{ name: 'memory_vectors', status: 'BUILDING', queryable: false }], 'warn'],
      [async () => Promise.reject(serverError(40324, 'Unrecognized pipeline stage name')), 'debug'],
    ] as const) {
      const lines: string[] = [];
      const probe = new VectorSearchProbe(fakeCollection(answer).collection, 'auto', 'memory_vectors', { debug: (m) => lines.push(`debug ${m}`), warn: (m) => lines.push(`warn ${m}`) });
      expect(await probe.path()).toBe('local');
      expect(lines).toHaveLength(1);
      expect(lines[0]?.startsWith(level)).toBe(true);
    }
  });

  it('auto: an unreachable server means local for now and another probe next time', async () => {
    let reachable = false;
    const { collection, calls } = fakeCollection(async () => {
      if (!reachable) throw new MongoNetworkError('connection refused');
      return [{ name: 'memory_vectors', queryable: true }];
    });
    const probe = new VectorSearchProbe(collection, 'auto', 'memory_vectors', { debug: () => undefined, warn: () => undefined });
    expect(await probe.path()).toBe('local');
    reachable = true;
    expect(await probe.path()).toBe('atlas');
    expect(calls).toHaveLength(2);
  });

  it('local never probes; atlas does not probe, and falls back for good after an unsupported-search error', async () => {
    const { collection, calls } = fakeCollection(async () => []);
    expect(await new VectorSearchProbe(collection, 'local', 'i').path()).toBe('local');
    const atlas = new VectorSearchProbe(collection, 'atlas', 'i', { debug: () => undefined, warn: () => undefined });
    expect(await atlas.path()).toBe('atlas');
    atlas.fallBack(serverError(40324, 'Unrecognized pipeline stage name'));
    expect(await atlas.path()).toBe('local');
    expect(calls).toHaveLength(0);
  });
});
