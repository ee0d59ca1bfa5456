import { BSON, Collection, type Db } from 'mongodb';
import type { MemoryActivities } from '../../activities/memory/memory-activity-types';
import { PURGED_REASON } from '../../activities/memory/memory-purge';
import {
  MEMORIES_COLLECTION,
  MEMORY_AUDIT_COLLECTION,
  MEMORY_RECALL_COPIES_COLLECTION,
  MemoryRepository,
} from '../../activities/memory/memory-repository';
import { decodeRecallCopy } from '../../activities/memory/recall-copy';
import { DAY, fact, intent, memoryActivitiesOn, openTestDb, userSource } from '../support/memory-fixtures';

// Times around the real clock: recall copies are stamped with it.
const t0 = new Date(Math.floor(Date.now() / 1000) * 1000);
const at = (days: number) => new Date(t0.getTime() + days * DAY);
const year = at(365);
const namespace = { tenant: 'acme', user: 'ana' };

let db: Db;
let close: () => Promise<void>;
let repo: MemoryRepository;
let clock = t0;

function activities(auditRetentionDays: number): MemoryActivities {
  return memoryActivitiesOn(db, { clock: () => clock, config: { auditRetentionDays, vectorSearch: 'local' } });
}

/** Everything the database holds outside the recall copies, as text. */
async function everythingStored(): Promise<string> {
  const parts: string[] = [];
  for (const { name } of await db.listCollections().toArray()) {
    if (name === MEMORY_RECALL_COPIES_COLLECTION) continue;
    parts.push(BSON.EJSON.stringify(await db.collection(name).find({}).toArray()));
  }
  return parts.join('\n');
}

/** The texts in every stored recall copy (they are deflated, so a plain search would miss them). */
async function textsInCopies(): Promise<string[]> {
  const copies = await db.collection(MEMORY_RECALL_COPIES_COLLECTION).find({}).toArray();
  return copies.flatMap((c) => decodeRecallCopy(c).entries.map((e) => e.text));
}

beforeAll(async () => {
  ({ db, close } = await openTestDb('memory_purge'));
  repo = new MemoryRepository(db);
  await repo.ensureIndexes();
});
afterAll(async () => close());

describe('content purge after the audit retention', () => {
  it('deleted and expired memories, old audit entries and stale recall copies lose their content; ids, kinds, times and actions stay', async () => {
    const scope = repo.forNamespace(namespace);
    const ctx = (days: number) => ({ actor: { by: 'extraction' as const, sessionId: 's-1' }, now: at(days) });
    await scope.writeFact(fact('name', 'Ana', { source: userSource('s-1', 'turn-1'), statedAt: at(0), expiresAt: year }), ctx(0));
    await scope.writeFact(fact('hometown', 'Lisbon', { source: userSource('s-1', 'turn-2'), statedAt: at(0), expiresAt: year }), ctx(0));
    await scope.writeFact(fact('hometown', 'Porto', { source: userSource('s-1', 'turn-3'), statedAt: at(0.1), expiresAt: year }), ctx(0.1));
    const secret = await scope.writeFact(fact('locker code', 'Zebra-1234', { source: userSource('s-1', 'turn-4'), statedAt: at(0), expiresAt: year }), ctx(0));
    const trip = await scope.addIntent(intent('planning a trip to Kyoto', { source: userSource('s-1', 'turn-5'), statedAt: at(0), expiresAt: at(2) }), ctx(0));

    // A worker recalls and stores the namespace's copy; later another deletes the secret without touching that copy.
    const long = activities(30);
    clock = at(0.5);
    const recalled = await long.recallMemories({ namespace, query: 'what is my locker code', sessionId: 's-2', turnId: 't-1' });
    expect(recalled.strong.map((m) => m.id)).toContain(secret.memoryId);
    const staleCopy = await db.collection(MEMORY_RECALL_COPIES_COLLECTION).findOne({});
    expect(staleCopy).not.toBeNull();
    clock = at(1);
    expect((await long.deleteMemory({ namespace, memoryId: secret.memoryId, reason: 'forget my locker code Zebra-1234' })).deleted).toBe(true);
    await db.collection(MEMORY_RECALL_COPIES_COLLECTION).replaceOne({ _id: staleCopy!._id }, staleCopy!);
    expect(await textsInCopies()).toContain("The user's locker code is Zebra-1234.");

    // Within the retention: hidden, not purged.
    clock = at(3);
    expect(await long.sweepExpiredMemories({})).toEqual({ expired: 1, purged: 0, auditsScrubbed: 0 });
    expect((await scope.list({ statuses: ['deleted'] })).memories.map((m) => m._id)).toEqual([secret.memoryId]);

    // Retention shortened to one day: what ended before day 2 is purged, with every audit entry from before day 2.
    const short = activities(1);
    const first = await short.sweepExpiredMemories({});
    expect(first).toMatchObject({ expired: 0, purged: 1 });
    expect(first.auditsScrubbed).toBeGreaterThanOrEqual(6);
    const purgedSecret = await db.collection(MEMORIES_COLLECTION).findOne({ _id: secret.memoryId as never });
    expect(Object.keys(purgedSecret!).sort()).toEqual(['_id', 'createdAt', 'expiresAt', 'kind', 'ns', 'purgedAt', 'status', 'tenant', 'updatedAt', 'user', 'version'].sort());
    expect(purgedSecret).toMatchObject({ kind: 'fact', status: 'deleted', updatedAt: at(1), purgedAt: at(3), version: 3 });
    // The intent expired on day 3: its turn comes two days later.
    expect(await db.collection(MEMORIES_COLLECTION).findOne({ _id: trip.memoryId as never })).toMatchObject({ status: 'expired', text: "The user is planning a trip to Kyoto." });
    clock = at(5);
    expect(await short.sweepExpiredMemories({})).toMatchObject({ expired: 0, purged: 1 });

    // Nothing stored keeps the purged content or the overwritten value; the live memories keep theirs.
    const stored = await everythingStored();
    for (const gone of ['Zebra-1234', 'Kyoto', 'Lisbon']) expect(stored).not.toContain(gone);
    expect(stored).toContain("The user's hometown is Porto.");
    const copies = await textsInCopies();
    for (const gone of ['Zebra-1234', 'Kyoto']) expect(copies.join('\n')).not.toContain(gone);

    // The audit still says what happened, without what was said.
    const trail = await scope.auditTrail(secret.memoryId);
    expect(trail.map((a) => a.action)).toEqual(['create', 'delete', 'purge']);
    expect(trail.every((a) => a.after.text === '' && a.purgedAt !== undefined)).toBe(true);
    expect(trail.slice(0, 2).every((a) => a.reason === PURGED_REASON)).toBe(true);
    expect(trail[1]).toMatchObject({ actor: { by: 'user' }, at: at(1), after: { status: 'deleted' } });

    // Recall, lists and caches cannot bring it back.
    const after = await short.recallMemories({ namespace, query: 'what is my locker code', sessionId: 's-3', turnId: 't-1' });
    expect([...after.strong, ...after.weak].map((m) => m.id)).not.toContain(secret.memoryId);
    expect(await long.recallMemories({ namespace, query: 'locker code Zebra-1234', sessionId: 's-3', turnId: 't-2' })).toMatchObject({ strong: [], weak: [] });
    expect((await scope.list({ statuses: ['deleted', 'expired'] })).memories).toEqual([]);
    expect(await scope.get(secret.memoryId)).toBeNull();

    // Reprocessing the old turn does not recreate it; the user saying it again does.
    const replay = await scope.writeFact(fact('locker code', 'Zebra-1234', { source: userSource('s-1', 'turn-4'), statedAt: at(0), expiresAt: year }), ctx(5));
    expect(replay.outcome).toBe('unchanged');
    const again = await scope.writeFact(fact('locker code', 'Owl-77', { source: userSource('s-9', 'turn-1'), statedAt: at(5), expiresAt: year }), ctx(5));
    expect(again.outcome).toBe('created');
    expect(await scope.get(secret.memoryId)).toMatchObject({ value: 'Owl-77', status: 'active', version: 4 });
  });

  it('a purge that runs out of its time budget stops, and the next one goes on', async () => {
    const scope = repo.forNamespace({ tenant: 'acme', user: 'budget' });
    const ids = [];
    for (const value of ['red', 'green', 'blue']) {
      const { memoryId } = await scope.writeFact(fact(`colour of item ${value}`, value, { source: userSource('s-1', `turn-${value}`), statedAt: at(0), expiresAt: year }), { actor: { by: 'extraction' }, now: at(0) });
      await scope.delete(memoryId, 'test', { actor: { by: 'user' }, now: at(1) });
      ids.push(memoryId);
    }
    const out = await repo.purgeEnded(at(40), 30 * DAY, { budgetMs: 0 });
    expect(out).toMatchObject({ complete: false, purged: 0, auditsScrubbed: 0 });
    const rest = await repo.purgeEnded(at(40), 30 * DAY);
    expect(rest.complete).toBe(true);
    expect(rest.purged).toBeGreaterThanOrEqual(3);
    for (const id of ids) expect(await scope.get(id)).toBeNull();
  });

  it('a sweep with nothing past the retention changes nothing', async () => {
    clock = at(0);
    expect(await activities(30).sweepExpiredMemories({})).toEqual({ expired: 0, purged: 0, auditsScrubbed: 0 });
  });
});

describe('the expiry pass of a sweep', () => {
  it('stops at its time budget, saying so, and the next pass continues where it stopped', async () => {
    const ns = { tenant: 'acme', user: 'backlog' };
    const scope = repo.forNamespace(ns);
    const ctx = { actor: { by: 'extraction' as const, sessionId: 's-9' }, now: at(0) };
    for (let i = 0; i < 3; i++) await scope.addIntent(intent(`planning trip number ${i} to Kyoto`, { source: userSource('s-9', `turn-${i}`), statedAt: at(0), expiresAt: at(1) }), ctx);
    const none = await repo.sweepExpired(at(2), { budgetMs: -1 });
    expect(none).toEqual({ expired: 0, malformed: 0, complete: false });
    const rest = await repo.sweepExpired(at(2));
    expect(rest.complete).toBe(true);
    expect(rest.expired).toBeGreaterThanOrEqual(3);
    expect((await scope.list({ statuses: ['expired'] })).memories).toHaveLength(3);
  });
});

describe('a write whose writer died mid-write', () => {
  it('is finished by the sweep once its claim is stale: the deletion shows in the audit, and its content is scrubbed after the retention like any other', async () => {
    const ns = { tenant: 'acme', user: 'claims' };
    const scope = repo.forNamespace(ns);
    const written = await scope.writeFact(fact('nickname', 'Pipkin-77', { source: userSource('s-9', 'turn-1'), statedAt: at(0), expiresAt: year }), { actor: { by: 'extraction' }, now: at(0) });
    // Fault injector: the writer dies after writing the deleted document, before it marks its claim done.
    const original = Collection.prototype.updateOne;
    Collection.prototype.updateOne = function (this: Collection, filter: unknown, update: unknown, ...rest: unknown[]) {
      if (this.collectionName === MEMORY_AUDIT_COLLECTION && (update as { $unset?: { pending?: unknown } }).$unset?.pending !== undefined) throw new Error('worker killed');
      return (original as (...args: unknown[]) => unknown).call(this, filter, update, ...rest);
    } as typeof original;
    try {
      await expect(scope.delete(written.memoryId, 'forget my nickname', { actor: { by: 'user' }, now: at(1) })).rejects.toThrow('worker killed');
    } finally {
      Collection.prototype.updateOne = original;
    }
    expect(await scope.get(written.memoryId)).toMatchObject({ status: 'deleted' });
    // Before, nothing ever finished it: the deletion stayed out of the audit people read, and its pending copy of the
    // memory was never scrubbed.
    expect((await scope.readAudit(written.memoryId)).entries.map((e) => e.action)).toEqual(['create']);
    clock = at(60);
    await activities(30).sweepExpiredMemories({});
    expect((await scope.readAudit(written.memoryId)).entries.map((e) => e.action)).toEqual(['create', 'delete', 'purge']);
    expect(await everythingStored()).not.toContain('Pipkin-77');
  });
});
