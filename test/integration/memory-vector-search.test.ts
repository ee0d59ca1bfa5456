import type { Db } from 'mongodb';
import type { MemoryActivities, RecallMemoriesResult } from '../../activities/memory/memory-activity-types';
import { MemoryRepository } from '../../activities/memory/memory-repository';
import { isUnsupportedSearch } from '../../activities/memory/vector-search';
import { DAY, fact, memoryActivitiesOn, openTestDb, preference, userSource } from '../support/memory-fixtures';

const now = new Date('2026-03-01T10:00:00Z');
const namespace = { tenant: 'acme', user: 'ana' };

let db: Db;
let close: () => Promise<void>;

function activities(vectorSearch: 'auto' | 'atlas' | 'local', warnings: string[], debugs: string[] = []): MemoryActivities {
  return memoryActivitiesOn(db, { clock: () => now, config: { vectorSearch }, warnings, debugs });
}

const comparable = (r: RecallMemoriesResult) => ({ strong: r.strong, weak: r.weak, region: r.region, skipped: r.skipped, recallPath: r.recallPath });

beforeAll(async () => {
  ({ db, close } = await openTestDb('memory_vector_search'));
  const repo = new MemoryRepository(db);
  await repo.ensureIndexes();
  const scope = repo.forNamespace(namespace);
  const common = (i: number) => ({ source: userSource('s-1', `turn-${i}`), statedAt: new Date(now.getTime() - DAY), expiresAt: new Date(now.getTime() + 30 * DAY) });
  await scope.writeFact(fact('home city', 'Lisbon', common(1)), { actor: { by: 'extraction' }, now });
  await scope.writeFact(fact('favourite food', 'grilled sardines', common(2)), { actor: { by: 'extraction' }, now });
  await scope.writePreference(preference('concise answers', common(3)), { actor: { by: 'extraction' }, now });
});
afterAll(async () => close());

describe('vector search on FerretDB (no $vectorSearch): the local path', () => {
  it('FerretDB refuses the Atlas stages with an error the probe recognises', async () => {
    const stages = [{ $listSearchIndexes: { name: 'memory_vectors' } }, { $vectorSearch: { index: 'memory_vectors', path: 'embedding', queryVector: [1], numCandidates: 1, limit: 1 } }];
    for (const stage of stages) {
      const error = await db.collection('memories').aggregate([stage]).toArray().then(
        () => null,
        (err: unknown) => err,
      );
      expect(isUnsupportedSearch(error)).toBe(true);
    }
  });

  it('auto probes as the activities are made, falls back to the local path with one debug line, and recalls exactly what local recalls', async () => {
    const query = { namespace, query: 'which city is my home city, and do I like concise answers?', sessionId: 's', turnId: 't' };
    const local = await activities('local', []).recallMemories(query);
    expect(local.strong.length).toBeGreaterThan(0);
    expect(local.recallPath).toBe('local');

    const warnings: string[] = [];
    const debugs: string[] = [];
    const auto = activities('auto', warnings, debugs);
    // Asked at once, before any recall (a worker makes its activities as it starts).
    for (let i = 0; i < 100 && debugs.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(debugs).toEqual(['the MongoDB server has no Atlas Vector Search; recall ranks in the worker']);
    expect(comparable(await auto.recallMemories(query))).toEqual(comparable(local));
    expect(comparable(await auto.recallMemories({ ...query, turnId: 't2' }))).toEqual(comparable(local));
    expect(debugs).toHaveLength(1);
    expect(warnings).toEqual([]);
  });

  it('a worker with memory off never asks the server', async () => {
    const off: string[] = [];
    memoryActivitiesOn(db, { clock: () => now, config: { enabled: false, vectorSearch: 'auto' }, warnings: off, debugs: off });
    const on: string[] = [];
    memoryActivitiesOn(db, { clock: () => now, config: { vectorSearch: 'auto' }, warnings: on, debugs: on });
    // The one with memory on has its answer; the other never asked.
    for (let i = 0; i < 100 && on.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(on).toEqual(['the MongoDB server has no Atlas Vector Search; recall ranks in the worker']);
    expect(off).toEqual([]);
  });

  it('atlas configured on a server without it: the first recall gets the real error, falls back, and gives the same result', async () => {
    const query = { namespace, query: 'what food do I like?', sessionId: 's', turnId: 't' };
    const local = await activities('local', []).recallMemories(query);
    const warnings: string[] = [];
    const forced = activities('atlas', warnings);
    expect(comparable(await forced.recallMemories(query))).toEqual(comparable(local));
    expect(comparable(await forced.recallMemories({ ...query, turnId: 't2' }))).toEqual(comparable(local));
    expect(warnings.filter((w) => w.includes('$vectorSearch is not available'))).toHaveLength(1);
  });
});
