import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { Binary, type Db } from 'mongodb';
import { embedMemories, OfflineEmbedder, type Embedder } from '../../activities/memory/embedder';
import { LocalEmbedder } from '../../activities/memory/local-embedder';
import type { MemoryActivities } from '../../activities/memory/memory-activity-types';
import type { FactInput } from '../../activities/memory/memory-docs';
import { MEMORIES_COLLECTION, MEMORY_AUDIT_COLLECTION, MemoryRepository } from '../../activities/memory/memory-repository';
import { checkpointId, MEMORY_MAINTENANCE_COLLECTION, reembedMemories, type ReembedReport } from '../../activities/memory/reembed';
import { DAY, memoryActivitiesOn, openTestDb, userSource } from '../support/memory-fixtures';

/** The English model, one part of the default embedder (local:en-zh-q). */
const ENGLISH_MODEL = 'all-minilm-l6-v2-q' as const;

const now = new Date('2026-03-01T10:00:00Z');
const oldEmbedder = new OfflineEmbedder(256);
const newEmbedder = new OfflineEmbedder(96);
const tenants = ['acme', 'globex', 'initech'];
const PER_NAMESPACE = 20;
const CITIES = ['Porto', 'Lisbon', 'Faro', 'Braga', 'Coimbra', 'Evora', 'Aveiro', 'Leiria', 'Viseu', 'Guarda'];

let db: Db;
let close: () => Promise<void>;
let repo: MemoryRepository;

function factBy(embedder: OfflineEmbedder, i: number): FactInput {
  const predicate = `favourite thing number ${i}`;
  const value = `${CITIES[i % CITIES.length]} item ${i}`;
  const text = `The user's ${predicate} is ${value}.`;
  return {
    subject: 'user',
    predicate,
    key: `user|${predicate}`,
    value,
    text,
    embedding: embedder.embedOne(text),
    embedderId: embedder.id,
    source: userSource('s-1', `turn-${i}`),
    statedAt: new Date(now.getTime() - DAY),
    expiresAt: new Date(now.getTime() + 365 * DAY),
  };
}

function memoryWith(embedder: Embedder, warnings: string[]): MemoryActivities {
  return memoryActivitiesOn(db, { clock: () => now, embedder, config: { vectorSearch: 'local' }, warnings });
}

async function embedderIds(): Promise<Record<string, number>> {
  const rows = await db
    .collection(MEMORIES_COLLECTION)
    .aggregate<{ _id: string; n: number }>([{ $match: { status: 'active' } }, { $group: { _id: '$embedderId', n: { $sum: 1 } } }])
    .toArray();
  return Object.fromEntries(rows.map((r) => [r._id, r.n]));
}

beforeAll(async () => {
  ({ db, close } = await openTestDb('memory_reembed'));
  repo = new MemoryRepository(db);
  await repo.ensureIndexes();
  for (const tenant of tenants) {
    const scope = repo.forNamespace({ tenant, user: 'ana' });
    await scope.importMany(
      Array.from({ length: PER_NAMESPACE }, (_, i) => ({ kind: 'fact' as const, input: factBy(oldEmbedder, i) })),
      new Date(now.getTime() - 2 * DAY),
    );
  }
  // Ended memories are not re-embedded: one deleted, and recall never ranks them anyway.
  const acme = repo.forNamespace({ tenant: 'acme', user: 'ana' });
  const { memories } = await acme.list({ limit: 100 });
  const first = memories.find((m) => m.text === factBy(oldEmbedder, 0).text);
  await acme.delete(first!._id, 'test', { actor: { by: 'user' }, now: new Date(now.getTime() - DAY) });
});
afterAll(async () => close());

const ACTIVE = tenants.length * PER_NAMESPACE - 1;

describe('re-embedding stored memories to a new embedder', () => {
  it('a run killed mid-way, resumed, re-embeds every active memory once; recall never ranks two models together meanwhile', async () => {
    expect(oldEmbedder.id).not.toBe(newEmbedder.id);
    const warnings: string[] = [];
    const recallNew = memoryWith(newEmbedder, warnings);
    const namespace = { tenant: 'acme', user: 'ana' };
    const queryOf = (i: number) => `What is my favourite thing number ${i}? ${CITIES[i % CITIES.length]} item ${i}`;

    // Before: every memory holds the old model's vectors, so the new embedder ranks none of them and says why.
    const before = await recallNew.recallMemories({ namespace, query: queryOf(5), sessionId: 's', turnId: 't' });
    expect(before.strong.length + before.weak.length).toBe(0);
    expect(before.skipped.otherEmbedder).toBe(PER_NAMESPACE - 1);
    expect(warnings.some((w) => w.includes('another embedder'))).toBe(true);

    // A run in its own process, SIGKILLed after its second checkpoint.
    const child = spawn(process.execPath, ['--import', 'tsx', join(process.cwd(), 'test/support/reembed-child.ts'), process.env.MONGODB_URI!, db.databaseName, '96', '8'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const killedAfter = await new Promise<string>((resolve, reject) => {
      let seen = 0;
      child.stdout.on('data', (d: Buffer) => {
        for (const line of d.toString().split('\n')) {
          if (!line.startsWith('progress ')) continue;
          if (++seen === 2) {
            child.kill('SIGKILL');
            resolve(line);
          }
        }
      });
      child.on('exit', (code) => reject(new Error(`the child exited (${code}) before its second checkpoint: ${stderr}`)));
    });
    await new Promise((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve(null) : child.once('exit', resolve)));
    expect(killedAfter).toBe(`progress 16/${ACTIVE}`);
    const checkpoint = await db.collection(MEMORY_MAINTENANCE_COLLECTION).findOne({ _id: checkpointId(newEmbedder.id) as never });
    expect(checkpoint).toMatchObject({ state: 'running', total: ACTIVE });
    const halfway = await embedderIds();
    expect(halfway[newEmbedder.id]).toBeGreaterThanOrEqual(16);
    expect(halfway[oldEmbedder.id]).toBeGreaterThan(0);

    // Half done: recall ranks only the re-embedded memories and counts the others.
    const mid = await recallNew.recallMemories({ namespace, query: queryOf(19), sessionId: 's', turnId: 't2' });
    const acmeNew = await db.collection(MEMORIES_COLLECTION).countDocuments({ ns: JSON.stringify(['acme', 'ana', null]), status: 'active', embedderId: newEmbedder.id });
    expect(mid.skipped.otherEmbedder).toBe(PER_NAMESPACE - 1 - acmeNew);
    const rankedIds = [...mid.strong, ...mid.weak].map((m) => m.id);
    const rankedDocs = await db.collection(MEMORIES_COLLECTION).find({ _id: { $in: rankedIds as never[] } }).toArray();
    expect(rankedDocs.every((d) => d.embedderId === newEmbedder.id)).toBe(true);

    // Resumed in this process, with an abort after one more batch, then to the end.
    const abort = new AbortController();
    const partial = await reembedMemories(db, { embedder: newEmbedder, batchSize: 8, signal: abort.signal, onProgress: () => abort.abort() });
    expect(partial).toMatchObject({ complete: false, resumed: true });
    const progress: string[] = [];
    const report: ReembedReport = await reembedMemories(db, { embedder: newEmbedder, batchSize: 8, onProgress: (p) => progress.push(`${p.done}/${p.total}`) });
    expect(report).toMatchObject({ embedderId: newEmbedder.id, complete: true, resumed: true, total: ACTIVE, failed: 0 });
    expect(report.reembedded + report.skipped).toBe(ACTIVE);
    expect(progress.at(-1)).toBe(`${ACTIVE}/${ACTIVE}`);
    expect(Object.keys(report.perNamespace)).toHaveLength(tenants.length);
    expect(report.ms).toBeGreaterThan(0);

    // Every active memory once under the new embedder, each with exactly one `reembed` audit entry; the deleted one untouched.
    expect(await embedderIds()).toEqual({ [newEmbedder.id]: ACTIVE });
    const reembedAudits = await db
      .collection(MEMORY_AUDIT_COLLECTION)
      .aggregate<{ _id: string; n: number }>([{ $match: { action: 'reembed' } }, { $group: { _id: '$memoryId', n: { $sum: 1 } } }])
      .toArray();
    expect(reembedAudits).toHaveLength(ACTIVE);
    expect(reembedAudits.every((a) => a.n === 1)).toBe(true);
    expect(await db.collection(MEMORIES_COLLECTION).countDocuments({ status: 'deleted', embedderId: oldEmbedder.id })).toBe(1);

    // After: recall with the new embedder finds the memory; with the old one it finds nothing and says why.
    const after = await recallNew.recallMemories({ namespace, query: queryOf(5), sessionId: 's', turnId: 't3' });
    expect(after.skipped.otherEmbedder).toBe(0);
    expect(after.strong.map((m) => m.text)).toContain(factBy(newEmbedder, 5).text);
    const recallOld = memoryWith(oldEmbedder, []);
    const stale = await recallOld.recallMemories({ namespace, query: queryOf(5), sessionId: 's', turnId: 't4' });
    expect(stale.strong.length + stale.weak.length).toBe(0);
    expect(stale.skipped.otherEmbedder).toBe(PER_NAMESPACE - 1);

    // Run again: a new run that visits every memory and writes none.
    const again = await reembedMemories(db, { embedder: newEmbedder });
    expect(again).toMatchObject({ complete: true, resumed: false, total: ACTIVE, reembedded: 0, skipped: ACTIVE, failed: 0 });
  });

  it('a memory of the embedder whose vector is in the older bare-bytes form is stored again as a BSON vector, once', async () => {
    const scope = repo.forNamespace({ tenant: 'acme', user: 'old-form' });
    const { memoryId } = await scope.writeFact(factBy(newEmbedder, 3), { actor: { by: 'extraction' }, now });
    const bare = new Binary(new Uint8Array(new Float32Array(newEmbedder.embedOne(factBy(newEmbedder, 3).text)).buffer));
    await db.collection(MEMORIES_COLLECTION).updateOne({ _id: memoryId as never }, { $set: { embedding: bare } });
    const before = await scope.get(memoryId);

    const report = await reembedMemories(db, { embedder: newEmbedder, restart: true });
    expect(report).toMatchObject({ complete: true, reembedded: 1, failed: 0 });
    expect(report.perNamespace[scope.nsKey]).toEqual({ reembedded: 1, skipped: 0, failed: 0 });
    const raw = await db.collection(MEMORIES_COLLECTION).findOne({ _id: memoryId as never });
    expect((raw!.embedding as Binary).sub_type).toBe(Binary.SUBTYPE_VECTOR);
    expect(Array.from((await scope.get(memoryId))!.embedding)).toEqual(Array.from(before!.embedding));
    expect((await scope.auditTrail(memoryId)).at(-1)).toMatchObject({ action: 'reembed', reason: `vector of ${newEmbedder.id} stored again as a BSON vector` });
    expect(await reembedMemories(db, { embedder: newEmbedder, restart: true })).toMatchObject({ reembedded: 0, failed: 0 });
  });

  it('a memory rewritten between its embedding and its write keeps the writer\'s vector (counted as skipped)', async () => {
    const scope = repo.forNamespace({ tenant: 'acme', user: 'race' });
    const { memoryId } = await scope.writeFact(factBy(oldEmbedder, 1), { actor: { by: 'extraction' }, now });
    const stale = factBy(oldEmbedder, 1).text;
    await scope.writeFact({ ...factBy(newEmbedder, 2), key: 'user|favourite thing number 1', predicate: 'favourite thing number 1', statedAt: now }, { actor: { by: 'extraction' }, now });
    expect(await scope.reembed(memoryId, stale, newEmbedder.embedOne(stale), newEmbedder.id, now)).toBe(false);
    const doc = await scope.get(memoryId);
    expect(doc).toMatchObject({ embedderId: newEmbedder.id, version: 2 });
  });

  it('a memory embedded as stored by the local model is moved to its first-person space, with the vector extraction would write', async () => {
    const local = new LocalEmbedder(ENGLISH_MODEL);
    const scope = repo.forNamespace({ tenant: 'acme', user: 'wording' });
    const text = "The user's dog is called Biscuit.";
    const [asStored = []] = await local.embed([text]);
    const { memoryId } = await scope.writeFact({ ...factBy(oldEmbedder, 4), text, embedding: asStored, embedderId: `local:${ENGLISH_MODEL}` }, { actor: { by: 'extraction' }, now });

    const report = await reembedMemories(db, { embedder: local, restart: true });
    expect(report).toMatchObject({ complete: true, failed: 0 });
    const doc = await scope.get(memoryId);
    expect(doc).toMatchObject({ embedderId: `local:${ENGLISH_MODEL}:first-person`, text });
    const [written = []] = await embedMemories(local, [text]);
    const [firstPerson = []] = await local.embed(['My dog is called Biscuit.']);
    const stored = Array.from(doc!.embedding);
    stored.forEach((x, i) => expect(x).toBeCloseTo(written[i] as number, 5));
    stored.forEach((x, i) => expect(x).toBeCloseTo(firstPerson[i] as number, 5));
    expect(stored.some((x, i) => Math.abs(x - (asStored[i] as number)) > 0.01)).toBe(true);
  });
});
