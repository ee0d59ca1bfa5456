import type { Db } from 'mongodb';
import OpenAI from 'openai';
import { createMemoryActivities } from '../../activities/memory/memory-activities';
import type { MemoryActivities } from '../../activities/memory/memory-activity-types';
import { defaultMemoryConfig } from '../../activities/memory/memory-config';
import type { MemoryLog } from '../../activities/memory/memory-log';
import { MemoryRepository, MEMORIES_COLLECTION } from '../../activities/memory/memory-repository';
import { memoryIdFor } from '../../activities/memory/memory-identity';
import type { MemoryNamespace } from '../../activities/memory/memory-types';
import { DAY, embedder, fact, intent, openTestDb, preference, seededRandom, userSource } from '../support/memory-fixtures';

const t0 = new Date('2025-05-01T10:00:00Z');
const at = (days: number) => new Date(t0.getTime() + days * DAY);

let db: Db;
let close: () => Promise<void>;
let repo: MemoryRepository;
let now = t0;
const warnings: string[] = [];
const log: MemoryLog = { debug: () => undefined, warn: (message, meta) => warnings.push(`${message} ${JSON.stringify(meta)}`) };
// Recall and sweeps never call the model; the client only has to exist.
const openai = new OpenAI({ baseURL: 'http://127.0.0.1:9/v1', apiKey: 'unused', maxRetries: 0 });

function activities(): MemoryActivities {
  return createMemoryActivities({ db, openai, embedder, modelName: 'unused', config: defaultMemoryConfig(), clock: () => now, log });
}

beforeAll(async () => {
  ({ db, close } = await openTestDb('memory_recall'));
  repo = new MemoryRepository(db);
  await repo.ensureIndexes();
});
afterAll(async () => close());
beforeEach(() => {
  now = t0;
});

const ask = (memory: MemoryActivities, namespace: MemoryNamespace, query: string) => memory.recallMemories({ namespace, query, sessionId: 's-recall', turnId: 'turn-1' });

describe('memory recall against the real MongoDB-compatible server', () => {
  it('an expired memory is never recalled, before or after the sweep', async () => {
    const ns = { tenant: 'acme', user: 'expiry' };
    const memory = activities();
    const me = repo.forNamespace(ns);
    await me.addIntent(intent('travelling to Berlin at the end of the month', { source: userSource('s-1', 'turn-1'), statedAt: at(0), expiresAt: at(14) }), { actor: { by: 'extraction' }, now: at(0) });

    const live = await ask(memory, ns, 'Book my flight to Berlin at the end of the month');
    expect(live.strong.map((m) => m.text)).toEqual(['The user is travelling to Berlin at the end of the month.']);

    now = at(15); // past expiresAt; the sweep has not run, and the worker's cache still holds it
    const beforeSweep = await ask(memory, ns, 'Book my flight to Berlin at the end of the month');
    expect([...beforeSweep.strong, ...beforeSweep.weak]).toEqual([]);

    const swept = await memory.sweepExpiredMemories({ now: now.toISOString() });
    expect(swept.expired).toBeGreaterThanOrEqual(1);
    const afterSweep = await ask(activities(), ns, 'Book my flight to Berlin at the end of the month');
    expect([...afterSweep.strong, ...afterSweep.weak]).toEqual([]);

    const { memories } = await memory.listMemories({ namespace: ns, statuses: ['expired'] });
    expect(memories.map((m) => m.statement)).toEqual(['travelling to Berlin at the end of the month']);
    expect((await me.auditTrail()).map((a) => a.action)).toEqual(['create', 'expire']);
    // A second sweep finds nothing left to do.
    expect((await memory.sweepExpiredMemories({ now: now.toISOString() })).expired).toBe(0);
  });

  it('a month-end travel intent from long ago is not injected into an unrelated request', async () => {
    const ns = { tenant: 'acme', user: 'traveller' };
    const memory = activities();
    const me = repo.forNamespace(ns);
    // Said 40 days ago with the default 14-day intent TTL: long expired, never swept.
    await me.addIntent(intent('travelling at month end', { source: userSource('s-old', 'turn-1'), statedAt: at(-40), expiresAt: at(-26) }), { actor: { by: 'extraction' }, now: at(-40) });
    // A live intent on another topic must not leak into an unrelated request either.
    await me.addIntent(intent('moving to a new flat next month', { source: userSource('s-new', 'turn-1'), statedAt: at(-1), expiresAt: at(13) }), { actor: { by: 'extraction' }, now: at(-1) });

    const recalled = await ask(memory, ns, 'Recommend weekend activities for a friend');
    expect(recalled.strong).toEqual([]);
    expect(recalled.weak).toEqual([]);
    expect(recalled.region).toBe('');
    expect(recalled.injectedIds).toEqual([]);
    // The live intent is recallable when it is relevant.
    const relevant = await ask(memory, ns, 'Help me plan moving to the new flat');
    expect([...relevant.strong, ...relevant.weak].map((m) => m.text)).toEqual(['The user is moving to a new flat next month.']);
  });

  it('randomized reads across many namespaces never return another namespace\'s memory', async () => {
    const random = seededRandom(20250501);
    const texts = [
      ['lives in', 'Lisbon'],
      ['name', 'Ana Lima'],
      ['employer', 'Acme Corp'],
      ['dog', 'Biscuit'],
      ['timezone', 'Europe/Lisbon'],
      ['editor', 'Neovim'],
      ['team', 'payments platform'],
      ['favourite food', 'vegetarian curry'],
    ] as const;
    // Same tenant or user names across namespaces, with and without projects: the cases a sloppy filter would mix up.
    const namespaces: MemoryNamespace[] = [];
    for (const tenant of ['acme', 'globex']) {
      for (const user of ['ana', 'rui', 'sofia']) {
        namespaces.push({ tenant, user }, { tenant, user, project: 'apollo' });
      }
    }
    const owned = new Map<string, Set<string>>();
    for (const ns of namespaces) {
      const me = repo.forNamespace(ns);
      // Every namespace holds the same kinds of memories with the same wording, so similarity alone would leak.
      const picks = texts.filter(() => random() < 0.75);
      const ids = await me.importMany(
        picks.map(([predicate, value]) => ({ kind: 'fact' as const, input: fact(predicate, value, { source: userSource(`s-${me.nsKey}`, 'turn-1'), statedAt: at(0), expiresAt: at(365) }) })),
        at(0),
      );
      owned.set(me.nsKey, new Set(ids));
    }
    const workers = [activities(), activities()];
    let returned = 0;
    for (let i = 0; i < 60; i++) {
      const ns = namespaces[Math.floor(random() * namespaces.length)] as MemoryNamespace;
      const [predicate, value] = texts[Math.floor(random() * texts.length)] as readonly [string, string];
      const worker = workers[i % 2] as MemoryActivities;
      const result = await ask(worker, ns, `What is my ${predicate}? Is it ${value}?`);
      const mine = owned.get(repo.forNamespace(ns).nsKey) as Set<string>;
      for (const m of [...result.strong, ...result.weak]) {
        expect(mine.has(m.id)).toBe(true);
        returned++;
      }
      const listed = await worker.listMemories({ namespace: ns });
      expect(listed.memories.every((m) => mine.has(m.id))).toBe(true);
      expect(listed.memories).toHaveLength(mine.size);
    }
    expect(returned).toBeGreaterThan(20);

    // Deleting with another namespace's id deletes nothing.
    const [victim, intruder] = namespaces as [MemoryNamespace, MemoryNamespace];
    const victimId = [...(owned.get(repo.forNamespace(victim).nsKey) as Set<string>)][0] as string;
    expect(await workers[0]?.deleteMemory({ namespace: intruder, memoryId: victimId })).toEqual({ deleted: false });
    expect((await repo.forNamespace(victim).get(victimId))?.status).toBe('active');
  });

  it('a memory deleted through one worker is not recalled by another worker that cached it', async () => {
    const ns = { tenant: 'acme', user: 'two-workers' };
    const [a, b] = [activities(), activities()];
    const { memoryId } = await repo
      .forNamespace(ns)
      .writePreference(preference('answers in Portuguese', { source: userSource('s-1', 'turn-1'), statedAt: at(0), expiresAt: at(700) }), { actor: { by: 'extraction' }, now: at(0) });
    expect((await ask(a, ns, 'Answer in Portuguese please')).strong.map((m) => m.id)).toEqual([memoryId]);
    expect(await b.deleteMemory({ namespace: ns, memoryId })).toMatchObject({ deleted: true, memory: { id: memoryId, status: 'active' } });
    const after = await ask(a, ns, 'Answer in Portuguese please');
    expect([...after.strong, ...after.weak]).toEqual([]);
  });

  it('a worker applies its own writes to its cache, and reloads after another worker\'s write', async () => {
    const ns = { tenant: 'acme', user: 'cache' };
    const worker = activities();
    const me = repo.forNamespace(ns);
    const ctx = { actor: { by: 'extraction' as const }, now: at(0) };
    await me.writeFact(fact('dog', 'Biscuit', { source: userSource('s-1', 'turn-1'), statedAt: at(0), expiresAt: at(365) }), ctx);
    expect((await ask(worker, ns, "What is my dog's name?")).cacheHit).toBe(false);
    expect((await ask(worker, ns, "What is my dog's name?")).cacheHit).toBe(true);

    await me.writeFact(fact('cat', 'Miso', { source: userSource('s-1', 'turn-2'), statedAt: at(0), expiresAt: at(365) }), ctx);
    const afterOwnWrite = await ask(worker, ns, "What is my cat's name?");
    expect(afterOwnWrite.cacheHit).toBe(true);
    expect(afterOwnWrite.strong.map((m) => m.text)).toEqual(["The user's cat is Miso."]);

    // Another worker's write is seen only as a generation this worker did not produce.
    await db.collection('memory_namespaces').updateOne({ _id: me.nsKey as never }, { $inc: { generation: 1 } });
    expect((await ask(worker, ns, "What is my cat's name?")).cacheHit).toBe(false);
  });

  it('a malformed stored document is skipped in recall with a counted warning', async () => {
    const ns = { tenant: 'acme', user: 'malformed' };
    const me = repo.forNamespace(ns);
    const good = await me.writeFact(fact('name', 'Ana', { source: userSource('s-1', 'turn-1'), statedAt: at(0), expiresAt: at(365) }), { actor: { by: 'extraction' }, now: at(0) });
    const badId = memoryIdFor(me.nsKey, { kind: 'fact', key: 'user|broken' });
    await db.collection(MEMORIES_COLLECTION).insertOne({
      _id: badId as never,
      ns: me.nsKey,
      tenant: 'acme',
      user: 'malformed',
      kind: 'fact',
      status: 'active',
      text: "The user's name is Ana.",
      embedding: [0.1, 0.2],
      embedderId: embedder.id,
      expiresAt: at(365),
    });
    // Any write bumps the generation, so the cache reloads and sees the bad document.
    await me.writeFact(fact('lives in', 'Lisbon', { source: userSource('s-1', 'turn-2'), statedAt: at(0), expiresAt: at(365) }), { actor: { by: 'extraction' }, now: at(0) });
    warnings.length = 0;
    const result = await ask(activities(), ns, 'What is my name?');
    expect(result.strong.map((m) => m.id)).toEqual([good.memoryId]);
    expect(result.skipped.malformed).toBe(1);
    expect(warnings.join('\n')).toContain(`memory document ${badId} in MongoDB is malformed`);
    expect(warnings.join('\n')).toMatch(/embedding: must be BSON Binary/);
  });

  it('memories embedded by another embedder are left out rather than compared across vector spaces', async () => {
    const ns = { tenant: 'acme', user: 'other-embedder' };
    await repo.forNamespace(ns).writeFact(
      { ...fact('name', 'Ana', { source: userSource('s-1', 'turn-1'), statedAt: at(0), expiresAt: at(365) }), embedderId: 'openai:text-embedding-3-small', embedding: [0.6, 0.8] },
      { actor: { by: 'extraction' }, now: at(0) },
    );
    const result = await ask(activities(), ns, 'What is my name?');
    expect(result.strong).toEqual([]);
    expect(result.skipped.otherEmbedder).toBe(1);
  });
});
