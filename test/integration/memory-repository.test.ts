import type { Db } from 'mongodb';
import { auditEntryFor, toStored } from '../../activities/memory/memory-docs';
import { MemoryRepository, ScopedMemories, MEMORIES_COLLECTION, MEMORY_AUDIT_COLLECTION } from '../../activities/memory/memory-repository';
import { snapshotOf, type MemoryDoc } from '../../activities/memory/memory-types';
import { DAY, embedder, fact, intent, openTestDb, preference, userSource } from '../support/memory-fixtures';

const t0 = new Date('2025-05-01T10:00:00Z');
const at = (days: number) => new Date(t0.getTime() + days * DAY);
const year = at(365);

let db: Db;
let close: () => Promise<void>;
let repo: MemoryRepository;

beforeAll(async () => {
  ({ db, close } = await openTestDb('memory_repo'));
  repo = new MemoryRepository(db);
  await repo.ensureIndexes();
});
afterAll(async () => close());

let n = 0;
const freshUser = () => repo.forNamespace({ tenant: 'acme', user: `user-${++n}` });
const ctx = (now: Date) => ({ actor: { by: 'extraction' as const, sessionId: 's-1' }, now });

describe('memory repository on the real MongoDB-compatible server', () => {
  it('the same fact key overwrites the old value, sets updatedAt, and the audit keeps the old value', async () => {
    const me = freshUser();
    const first = await me.writeFact(fact('lives in', 'Lisbon', { source: userSource('s-1', 'turn-1'), statedAt: at(0), expiresAt: year }), ctx(at(0)));
    const second = await me.writeFact(fact('lives in', 'Porto', { source: userSource('s-2', 'turn-1'), statedAt: at(3), expiresAt: year }), ctx(at(3)));
    expect(first.outcome).toBe('created');
    expect(second).toEqual({ outcome: 'overwritten', memoryId: first.memoryId, superseded: [] });

    const stored = await me.get(first.memoryId);
    expect(stored).toMatchObject({ kind: 'fact', key: 'user|lives in', value: 'Porto', status: 'active', version: 2, updatedAt: at(3), createdAt: at(0) });
    expect(await db.collection(MEMORIES_COLLECTION).countDocuments({ ns: me.nsKey, key: 'user|lives in' })).toBe(1);

    const trail = await me.auditTrail(first.memoryId);
    expect(trail.map((a) => a.action)).toEqual(['create', 'overwrite']);
    expect(trail[0]).toMatchObject({ version: 1, before: null, after: { value: 'Lisbon' } });
    expect(trail[1]).toMatchObject({ version: 2, before: { value: 'Lisbon' }, after: { value: 'Porto' }, reason: 'value changed from "Lisbon" to "Porto"', actor: { by: 'extraction' } });
  });

  it('a retried write of the same statement changes nothing, and an older statement never overwrites a newer one', async () => {
    const me = freshUser();
    const input = fact('name', 'Ana', { source: userSource('s-1', 'turn-2'), statedAt: at(2), expiresAt: year });
    const { memoryId } = await me.writeFact(input, ctx(at(2)));
    expect((await me.writeFact(input, ctx(at(2)))).outcome).toBe('unchanged');
    const older = await me.writeFact(fact('name', 'Anna', { source: userSource('s-1', 'turn-1'), statedAt: at(1), expiresAt: year }), ctx(at(2)));
    expect(older.outcome).toBe('unchanged');
    expect(await me.get(memoryId)).toMatchObject({ value: 'Ana', version: 1 });
    expect(await me.auditTrail(memoryId)).toHaveLength(1);
  });

  it('racing writers of one fact key leave exactly one document, every change audited', async () => {
    const me = freshUser();
    const results = await Promise.all(
      ['Lisbon', 'Porto', 'Faro', 'Braga'].map((city, i) =>
        me.writeFact(fact('lives in', city, { source: userSource('s-1', `turn-${i}`), statedAt: at(i), expiresAt: year }), ctx(at(i))),
      ),
    );
    const ids = new Set(results.map((r) => r.memoryId));
    expect(ids.size).toBe(1);
    expect(await db.collection(MEMORIES_COLLECTION).countDocuments({ ns: me.nsKey })).toBe(1);
    const doc = await me.get([...ids][0] as string);
    const trail = await me.auditTrail(doc?._id);
    expect(trail.map((a) => a.version)).toEqual(Array.from({ length: doc?.version ?? 0 }, (_, i) => i + 1));
  });

  it('first writes racing in a new namespace all land, and the generation counts every one', async () => {
    const me = freshUser();
    const keys = ['name', 'lives in', 'employer', 'dog', 'editor', 'team'];
    const results = await Promise.all(keys.map((k, i) => me.writeFact(fact(k, `value ${i}`, { source: userSource('s-1', 'turn-1', i), statedAt: at(0), expiresAt: year }), ctx(at(0)))));
    expect(results.map((r) => r.outcome)).toEqual(keys.map(() => 'created'));
    expect(await me.generation()).toBe(keys.length);
  });

  it('several workers reinforcing one preference at once lose no statement (claims, not atomic updates)', async () => {
    // Separate repositories without in-process serialization behave like separate workers.
    const ns = { tenant: 'acme', user: `user-${++n}` };
    const first = await repo.forNamespace(ns).writePreference(preference('dark mode', { source: userSource('s-0', 'turn-1'), statedAt: at(0), expiresAt: year }), ctx(at(0)));
    const workers = Array.from({ length: 7 }, () => new MemoryRepository(db, { serializeWrites: false }).forNamespace(ns));
    const results = await Promise.all(
      workers.map((w, i) => w.writePreference(preference('dark mode', { source: userSource(`s-${i + 1}`, 'turn-1'), statedAt: at(1), expiresAt: year }), ctx(at(1)))),
    );
    expect(results.map((r) => r.outcome)).toEqual(Array.from({ length: 7 }, () => 'reinforced'));
    const stored = await repo.forNamespace(ns).get(first.memoryId);
    expect(stored).toMatchObject({ weight: 8, version: 8 });
    const trail = await repo.forNamespace(ns).auditTrail(first.memoryId);
    expect(trail.map((a) => a.version)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(trail.slice(1).every((a) => a.after.weight === (a.before?.weight ?? 0) + 1)).toBe(true);
  });

  it('a version claimed by a writer that died is finished by the next writer after the lease', async () => {
    const me = freshUser();
    const { memoryId } = await me.writeFact(fact('city', 'Lisbon', { source: userSource('s-1', 'turn-1'), statedAt: at(0), expiresAt: year }), ctx(at(0)));
    const v1 = (await me.get(memoryId)) as MemoryDoc;
    // The dead writer's claim on version 2: its audit entry, with the document it never wrote.
    const v2 = { ...v1, kind: 'fact' as const, value: 'Porto', text: "The user's city is Porto.", version: 2, updatedAt: at(1) } as MemoryDoc;
    const change = { action: 'overwrite' as const, reason: 'dead writer', before: snapshotOf(v1), at: at(1), actor: { by: 'extraction' as const } };
    await db.collection(MEMORY_AUDIT_COLLECTION).insertOne({ ...auditEntryFor(v2, change), claimedAt: new Date(Date.now() - 60_000), pending: toStored(v2) } as never);

    const next = await me.writeFact(fact('city', 'Faro', { source: userSource('s-1', 'turn-3'), statedAt: at(2), expiresAt: year }), ctx(at(2)));
    expect(next.outcome).toBe('overwritten');
    expect(await me.get(memoryId)).toMatchObject({ value: 'Faro', version: 3 });
    const trail = await me.auditTrail(memoryId);
    expect(trail.map((a) => [a.version, a.after.value])).toEqual([
      [1, 'Lisbon'],
      [2, 'Porto'],
      [3, 'Faro'],
    ]);
    expect(trail[2]?.before?.value).toBe('Porto');
  });

  it('a preference stated again gains weight; the same statement replayed does not', async () => {
    const me = freshUser();
    const outcomes: string[] = [];
    for (const [i, session] of ['s-1', 's-2', 's-3'].entries()) {
      const r = await me.writePreference(preference('concise answers', { source: userSource(session, 'turn-1'), statedAt: at(i), expiresAt: year }), ctx(at(i)));
      outcomes.push(r.outcome);
    }
    const replay = await me.writePreference(preference('concise answers', { source: userSource('s-3', 'turn-1'), statedAt: at(2), expiresAt: year }), ctx(at(4)));
    expect(outcomes).toEqual(['created', 'reinforced', 'reinforced']);
    expect(replay.outcome).toBe('unchanged');
    const stored = await me.get(replay.memoryId);
    expect(stored).toMatchObject({ kind: 'preference', weight: 3, version: 3 });
    expect((await me.auditTrail(replay.memoryId)).map((a) => [a.action, a.after.weight])).toEqual([
      ['create', 1],
      ['reinforce', 2],
      ['reinforce', 3],
    ]);
  });

  it('a contradicting preference supersedes the old one, on the same topic or with the opposite polarity', async () => {
    const me = freshUser();
    const concise = await me.writePreference(preference('concise answers', { topic: 'answer length', source: userSource('s-1', 'turn-1'), statedAt: at(0), expiresAt: year }), ctx(at(0)));
    const detailed = await me.writePreference(preference('detailed answers', { topic: 'answer length', source: userSource('s-2', 'turn-1'), statedAt: at(5), expiresAt: year }), ctx(at(5)));
    expect(detailed).toMatchObject({ outcome: 'created', superseded: [concise.memoryId] });
    expect(await me.get(concise.memoryId)).toMatchObject({ status: 'superseded', supersededBy: detailed.memoryId });
    expect((await me.auditTrail(concise.memoryId)).at(-1)).toMatchObject({ action: 'supersede', before: { status: 'active' }, after: { status: 'superseded' } });

    const likes = await me.writePreference(preference('emojis', { source: userSource('s-3', 'turn-1'), statedAt: at(6), expiresAt: year }), ctx(at(6)));
    const avoids = await me.writePreference(preference('emojis', { polarity: 'avoids', source: userSource('s-3', 'turn-2'), statedAt: at(7), expiresAt: year }), ctx(at(7)));
    expect(avoids.superseded).toEqual([likes.memoryId]);
    const active = (await me.list({ kinds: ['preference'] })).memories.map((m) => m._id).sort();
    expect(active).toEqual([detailed.memoryId, avoids.memoryId].sort());
  });

  it('an older contradicting statement processed late is the one superseded', async () => {
    const me = freshUser();
    const newer = await me.writePreference(preference('tea', { topic: 'drink', source: userSource('s-1', 'turn-5'), statedAt: at(5), expiresAt: year }), ctx(at(5)));
    const older = await me.writePreference(preference('coffee', { topic: 'drink', source: userSource('s-1', 'turn-1'), statedAt: at(1), expiresAt: year }), ctx(at(6)));
    expect(older.superseded).toEqual([older.memoryId]);
    expect(await me.get(newer.memoryId)).toMatchObject({ status: 'active' });
  });

  it('a deleted memory leaves the active set, keeps its audit, and only a newer statement brings it back', async () => {
    const me = freshUser();
    const { memoryId } = await me.writeFact(fact('employer', 'Acme', { source: userSource('s-1', 'turn-1'), statedAt: at(0), expiresAt: year }), ctx(at(0)));
    const deleted = await me.delete(memoryId, 'user asked', { actor: { by: 'user' }, now: at(1) });
    expect(deleted).toMatchObject({ kind: 'fact', value: 'Acme' });
    expect(await me.delete(memoryId, 'again', { actor: { by: 'user' }, now: at(1) })).toBeNull();
    expect((await me.list()).memories).toHaveLength(0);
    expect((await me.list({ statuses: ['deleted'] })).memories.map((m) => m._id)).toEqual([memoryId]);
    expect((await me.auditTrail(memoryId)).map((a) => a.action)).toEqual(['create', 'delete']);

    // Reprocessing the old turn must not undo "forget that".
    const replay = await me.writeFact(fact('employer', 'Acme', { source: userSource('s-1', 'turn-0'), statedAt: at(0), expiresAt: year }), ctx(at(2)));
    expect(replay.outcome).toBe('unchanged');
    const restated = await me.writeFact(fact('employer', 'Initech', { source: userSource('s-9', 'turn-1'), statedAt: at(3), expiresAt: year }), ctx(at(3)));
    expect(restated.outcome).toBe('created');
    expect(await me.get(memoryId)).toMatchObject({ status: 'active', value: 'Initech', version: 3 });
  });

  it('intents stated again have their expiry extended', async () => {
    const me = freshUser();
    const first = await me.addIntent(intent('training for a marathon', { source: userSource('s-1', 'turn-1'), statedAt: at(0), expiresAt: at(14) }), ctx(at(0)));
    const again = await me.addIntent(intent('training for a marathon', { source: userSource('s-2', 'turn-1'), statedAt: at(10), expiresAt: at(24) }), ctx(at(10)));
    expect([first.outcome, again.outcome]).toEqual(['created', 'reinforced']);
    expect(await me.get(first.memoryId)).toMatchObject({ expiresAt: at(24) });
  });

  it('an intent stated again in other words is recalled by the vector of its new words', async () => {
    const me = freshUser();
    const common = { statedAt: at(0), expiresAt: at(14) };
    const first = await me.addIntent(intent('training for a marathon', { ...common, source: userSource('s-1', 'turn-1') }), ctx(at(0)));
    const reworded = { ...intent('training for a marathon', { ...common, source: userSource('s-2', 'turn-1'), statedAt: at(1) }), text: 'The user is preparing to run a marathon in the spring.' };
    reworded.embedding = embedder.embedOne(reworded.text);
    expect((await me.addIntent(reworded, ctx(at(1)))).outcome).toBe('reinforced');
    const stored = (await me.get(first.memoryId))!;
    expect(stored.text).toBe(reworded.text);
    // Before, the text changed and the vector stayed the old text's.
    expect(Array.from(stored.embedding)).toEqual(Array.from(Float32Array.from(reworded.embedding)));
  });

  it('every write bumps the namespace generation that recall caches check', async () => {
    const me = freshUser();
    expect(await me.generation()).toBe(0);
    await me.writeFact(fact('name', 'Rui', { source: userSource('s-1', 'turn-1'), statedAt: at(0), expiresAt: year }), ctx(at(0)));
    const g1 = await me.generation();
    await me.writeFact(fact('name', 'Rui', { source: userSource('s-1', 'turn-1'), statedAt: at(0), expiresAt: year }), ctx(at(0)));
    expect(await me.generation()).toBe(g1);
    await me.writeFact(fact('name', 'Rui Costa', { source: userSource('s-1', 'turn-2'), statedAt: at(1), expiresAt: year }), ctx(at(1)));
    expect(await me.generation()).toBeGreaterThan(g1);
  });

  it('memory access needs a namespace: no scope without one, and no other way to build a scope', () => {
    expect(() => repo.forNamespace({ tenant: '', user: 'ana' })).toThrow();
    expect(() => repo.forNamespace({} as never)).toThrow();
    const Ctor = ScopedMemories as unknown as new (...args: unknown[]) => unknown;
    expect(() => new Ctor(Symbol('fake'), { tenant: 'a', user: 'b' })).toThrow(/MemoryRepository.forNamespace/);
  });
});
