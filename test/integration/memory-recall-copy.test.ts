import type { Db } from 'mongodb';
import OpenAI from 'openai';
import { createMemoryActivities } from '../../activities/memory/memory-activities';
import type { MemoryActivities, RecallMemoriesResult } from '../../activities/memory/memory-activity-types';
import { defaultMemoryConfig } from '../../activities/memory/memory-config';
import type { MemoryLog } from '../../activities/memory/memory-log';
import { MEMORIES_COLLECTION, MEMORY_RECALL_COPIES_COLLECTION, MemoryRepository, ScopedMemories } from '../../activities/memory/memory-repository';
import { memoryIdFor } from '../../activities/memory/memory-identity';
import type { MemoryNamespace } from '../../activities/memory/memory-types';
import { encodeEmbedding } from '../../activities/memory/memory-types';
import { RecallCache, type RecallCacheOptions } from '../../activities/memory/recall-cache';
import { DAY, embedder, fact, openTestDb, preference, seededRandom, userSource } from '../support/memory-fixtures';

const t0 = new Date('2025-05-01T10:00:00Z');
const ctx = { actor: { by: 'extraction' as const }, now: t0 };

let db: Db;
let close: () => Promise<void>;
let repo: MemoryRepository;
const warnings: string[] = [];
const log: MemoryLog = { debug: () => undefined, warn: (message, meta) => warnings.push(`${message} ${JSON.stringify(meta)}`) };
const openai = new OpenAI({ baseURL: 'http://127.0.0.1:9/v1', apiKey: 'unused', maxRetries: 0 });
const caches: RecallCache[] = [];

/** A worker's memory activities with a recall cache of its own, as a freshly started worker has. */
function worker(options: RecallCacheOptions = {}): { memory: MemoryActivities; cache: RecallCache } {
  const cache = new RecallCache({ log, ...options });
  caches.push(cache);
  return { cache, memory: createMemoryActivities({ db, openai, embedder, modelName: 'unused', config: defaultMemoryConfig(), clock: () => t0, cache, log }) };
}

/** Runs `body` and returns how many full reads of a namespace's memories it made (the scan a stored copy saves). */
async function fullReadsDuring(body: () => Promise<void>): Promise<number> {
  const spy = jest.spyOn(ScopedMemories.prototype, 'loadActive');
  try {
    await body();
    return spy.mock.calls.length;
  } finally {
    spy.mockRestore();
  }
}

const ask = (memory: MemoryActivities, namespace: MemoryNamespace, query: string) => memory.recallMemories({ namespace, query, sessionId: 's-copy', turnId: 'turn-1' });
/** What a recall decides, without its timing. */
const decided = (r: RecallMemoriesResult) => ({ strong: r.strong, weak: r.weak, region: r.region, injectedIds: r.injectedIds, skipped: r.skipped });

const QUERIES = ['Tell me about my dog', 'Which city do I live in?', 'Answer in Portuguese please', 'What editor do I use?', 'Plan my trip'];

async function seed(ns: MemoryNamespace, count: number): Promise<void> {
  const topics = ['dog', 'city', 'editor', 'car', 'team', 'band'];
  const values = ['Biscuit', 'Lisbon', 'Neovim', 'Tesla', 'Apollo', 'Muse'];
  await repo.forNamespace(ns).importMany(
    Array.from({ length: count }, (_, i) => {
      const common = { source: userSource('s-seed', `turn-${i}`), statedAt: t0, expiresAt: new Date(t0.getTime() + 365 * DAY) };
      return i % 4 === 3
        ? { kind: 'preference' as const, input: preference(`answers in Portuguese for ${topics[i % 6]} ${i}`, common) }
        : { kind: 'fact' as const, input: fact(`${topics[i % 6]} ${i}`, `${values[(i * 5) % 6]} ${i}`, common) };
    }),
    t0,
  );
}

beforeAll(async () => {
  ({ db, close } = await openTestDb('memory_recall_copy'));
  repo = new MemoryRepository(db);
  await repo.ensureIndexes();
});
afterEach(async () => {
  for (const cache of caches.splice(0)) {
    await cache.settled();
    cache.close();
  }
});
afterAll(async () => close());

describe('stored recall copies on the real MongoDB-compatible server', () => {
  it('a worker that starts cold recalls from the stored copy exactly what a full read gives, without reading the memories', async () => {
    const ns = { tenant: 'acme', user: 'cold-start' };
    await seed(ns, 60);
    const first = worker();
    const expected: Array<ReturnType<typeof decided>> = [];
    for (const q of QUERIES) expected.push(decided(await ask(first.memory, ns, q)));

    const reads = await fullReadsDuring(async () => {
      for (const [i, q] of QUERIES.entries()) {
        const cold = await ask(worker().memory, ns, q);
        expect(cold.cacheHit).toBe(false);
        expect(decided(cold)).toEqual(expected[i]);
      }
    });
    expect(reads).toBe(0);
  });

  it("a copy behind the namespace's generation is never used: another worker's write and delete are recalled correctly", async () => {
    const ns = { tenant: 'acme', user: 'behind' };
    const me = repo.forNamespace(ns);
    const dog = await me.writeFact(fact('dog', 'Biscuit', { source: userSource('s-1', 'turn-1'), statedAt: t0, expiresAt: new Date(t0.getTime() + 365 * DAY) }), ctx);
    const a = worker();
    expect((await ask(a.memory, ns, 'Tell me about my dog')).strong.map((m) => m.id)).toEqual([dog.memoryId]);
    // From here on the writes come from "another worker": no cache in this process sees them.
    a.cache.close();

    const cat = await me.writeFact(fact('cat', 'Miso', { source: userSource('s-1', 'turn-2'), statedAt: t0, expiresAt: new Date(t0.getTime() + 365 * DAY) }), ctx);
    const reads = await fullReadsDuring(async () => {
      expect((await ask(worker().memory, ns, "What is my cat's name?")).strong.map((m) => m.id)).toEqual([cat.memoryId]);
    });
    expect(reads).toBe(1);

    for (const cache of caches) cache.close();
    await me.delete(dog.memoryId, 'forget it', { actor: { by: 'user' }, now: t0 });
    const afterDelete = await ask(worker().memory, ns, 'Tell me about my dog');
    expect([...afterDelete.strong, ...afterDelete.weak].map((m) => m.id)).not.toContain(dog.memoryId);
  });

  it("this worker's own writes keep the stored copy current, so the next cold worker needs no full read", async () => {
    const ns = { tenant: 'acme', user: 'own-writes' };
    const me = repo.forNamespace(ns);
    await me.writeFact(fact('dog', 'Biscuit', { source: userSource('s-1', 'turn-1'), statedAt: t0, expiresAt: new Date(t0.getTime() + 365 * DAY) }), ctx);
    const a = worker();
    await ask(a.memory, ns, 'Tell me about my dog');

    const cat = await me.writeFact(fact('cat', 'Miso', { source: userSource('s-1', 'turn-2'), statedAt: t0, expiresAt: new Date(t0.getTime() + 365 * DAY) }), ctx);
    const old = await me.writeFact(fact('dog', 'Rex', { source: userSource('s-1', 'turn-3'), statedAt: new Date(t0.getTime() + 1000), expiresAt: new Date(t0.getTime() + 365 * DAY) }), ctx);
    expect(old.outcome).toBe('overwritten');
    const reads = await fullReadsDuring(async () => {
      const cold = worker();
      expect((await ask(cold.memory, ns, "What is my cat's name?")).strong.map((m) => m.id)).toEqual([cat.memoryId]);
      expect((await ask(cold.memory, ns, 'Tell me about my dog')).strong.map((m) => m.text)).toEqual(["The user's dog is Rex."]);
    });
    expect(reads).toBe(0);
  });

  it('a damaged stored copy is ignored with a warning, and the full read that follows replaces it', async () => {
    const ns = { tenant: 'acme', user: 'damaged' };
    const me = repo.forNamespace(ns);
    const dog = await me.writeFact(fact('dog', 'Biscuit', { source: userSource('s-1', 'turn-1'), statedAt: t0, expiresAt: new Date(t0.getTime() + 365 * DAY) }), ctx);
    await db.collection(MEMORY_RECALL_COPIES_COLLECTION).replaceOne({ _id: me.nsKey as never }, { format: 1, generation: 1, entries: 'not binary' }, { upsert: true });
    warnings.length = 0;
    expect((await ask(worker().memory, ns, 'Tell me about my dog')).strong.map((m) => m.id)).toEqual([dog.memoryId]);
    expect(warnings.join('\n')).toMatch(/stored recall copy ignored/);

    const reads = await fullReadsDuring(async () => {
      expect((await ask(worker().memory, ns, 'Tell me about my dog')).strong.map((m) => m.id)).toEqual([dog.memoryId]);
    });
    expect(reads).toBe(0);
  });

  it('a stored copy is trusted for the maximum age from when a worker takes it, then read again in the background, which catches a write that never bumped the generation', async () => {
    const ns = { tenant: 'acme', user: 'old-copy' };
    const me = repo.forNamespace(ns);
    await me.writeFact(fact('dog', 'Biscuit', { source: userSource('s-1', 'turn-1'), statedAt: t0, expiresAt: new Date(t0.getTime() + 365 * DAY) }), ctx);
    let clock = 1_000_000;
    await ask(worker({ clock: () => clock, maxAgeMs: 60_000 }).memory, ns, 'Tell me about my dog');
    for (const cache of caches) cache.close();

    // A writer that died between its write and its generation bump.
    const catId = memoryIdFor(me.nsKey, { kind: 'fact', key: 'user|cat' });
    const cat = fact('cat', 'Miso', { source: userSource('s-1', 'turn-2'), statedAt: t0, expiresAt: new Date(t0.getTime() + 365 * DAY) });
    const { embedding, ...rest } = cat;
    await db.collection(MEMORIES_COLLECTION).insertOne({
      ...rest,
      _id: catId as never,
      kind: 'fact',
      ns: me.nsKey,
      tenant: 'acme',
      user: 'old-copy',
      status: 'active',
      embedding: encodeEmbedding(embedding),
      sourceKeys: ['s-1:turn-2:0'],
      createdAt: t0,
      updatedAt: t0,
      version: 1,
    });

    // An hour later a worker starts: the copy is old, but this worker has only just taken it.
    clock += 3_600_000;
    const late = worker({ clock: () => clock, maxAgeMs: 60_000 });
    expect((await ask(late.memory, ns, "What is my cat's name?")).strong).toEqual([]);
    await late.cache.settled();
    expect((await ask(late.memory, ns, "What is my cat's name?")).strong).toEqual([]);
    // Held past the maximum age: this recall still answers from the copy and starts the reread.
    clock += 61_000;
    expect((await ask(late.memory, ns, "What is my cat's name?")).strong).toEqual([]);
    await late.cache.settled();
    expect((await ask(late.memory, ns, "What is my cat's name?")).strong.map((m) => m.id)).toEqual([catId]);
    // The background read stored its copy too: the next cold worker sees the memory at once.
    expect((await ask(worker({ clock: () => clock }).memory, ns, "What is my cat's name?")).strong.map((m) => m.id)).toEqual([catId]);
  });

  it('while one worker writes and deletes and others recall at the same time, every cold worker recalls exactly what a full read gives', async () => {
    const ns = { tenant: 'acme', user: 'busy' };
    await seed(ns, 30);
    const me = repo.forNamespace(ns);
    const random = seededRandom(20250501);
    const warm = [worker(), worker()];
    for (const w of warm) await ask(w.memory, ns, QUERIES[0] as string);
    const ids: string[] = [];
    for (let round = 0; round < 4; round++) {
      const writes = (async () => {
        for (let i = 0; i < 3; i++) {
          const n = round * 3 + i;
          if (ids.length > 0 && random() < 0.4) {
            await me.delete(ids.splice(Math.floor(random() * ids.length), 1)[0] as string, 'forget it', { actor: { by: 'user' }, now: t0 });
          } else {
            const w = await me.writeFact(fact(`pet ${n}`, `Name${n}`, { source: userSource('s-busy', `turn-${n}`), statedAt: t0, expiresAt: new Date(t0.getTime() + 365 * DAY) }), ctx);
            ids.push(w.memoryId);
          }
        }
      })();
      const recalls = Promise.all([...warm.map((w) => ask(w.memory, ns, 'What is my pet called?')), ask(worker().memory, ns, 'What is my pet called?')]);
      await Promise.all([writes, recalls]);

      const truth = decided(await ask(worker({ storeCopies: false }).memory, ns, 'What is my pet called?'));
      expect(decided(await ask(worker().memory, ns, 'What is my pet called?'))).toEqual(truth);
      for (const w of warm) expect(decided(await ask(w.memory, ns, 'What is my pet called?'))).toEqual(truth);
    }
    // Every round reads the namespace in full a few times; on a loaded FerretDB each can take seconds.
  }, 240_000);
});
