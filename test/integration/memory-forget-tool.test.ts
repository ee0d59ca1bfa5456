import type { Db } from 'mongodb';
import { defaultThresholds } from '../../activities/memory/embedder';
import { MEMORIES_COLLECTION, MemoryRepository } from '../../activities/memory/memory-repository';
import { findMemoriesTool, forgetMemoryTool } from '../../activities/tools/forget-memory-tool';
import type { NativeTool, ToolRunContext } from '../../activities/tools/native-tool';
import { nativeRunnable } from '../../activities/tools/tool-registry';
import type { UserNamespace } from '../../workflows/session-types';
import { DAY, embedder, fact, openTestDb, preference, userSource } from '../support/memory-fixtures';

const t0 = new Date('2025-05-01T10:00:00Z');
const expiresAt = new Date(t0.getTime() + 365 * DAY);
let db: Db;
let close: () => Promise<void>;
let repo: MemoryRepository;
let tool: NativeTool;
let find: NativeTool;

beforeAll(async () => {
  ({ db, close } = await openTestDb('memory_forget'));
  repo = new MemoryRepository(db);
  const deps = { repo, embedder, thresholds: () => defaultThresholds(embedder.id), clock: () => new Date(t0.getTime() + DAY) };
  tool = forgetMemoryTool(deps);
  find = findMemoriesTool(deps);
});
afterAll(async () => close());

type Brief = { id: string; kind: string; text: string };
const ctxFor = (namespace: UserNamespace): ToolRunContext => ({
  signal: new AbortController().signal,
  idempotencyKey: 's-1:turn-3:call_f',
  sessionId: 's-1',
  namespace,
  heartbeat: () => undefined,
});

function run(namespace: UserNamespace, args: Record<string, unknown>) {
  return tool.execute(tool.parameters.parse(args), ctxFor(namespace)) as Promise<{ deleted: Brief[]; count: number }>;
}

function lookup(namespace: UserNamespace, description: string) {
  return find.execute(find.parameters.parse({ description }), ctxFor(namespace)) as Promise<{ matches: Brief[]; possibleMatches?: Brief[] }>;
}

async function seed(namespace: UserNamespace) {
  const me = repo.forNamespace(namespace);
  const common = { source: userSource('s-0', 'turn-1'), statedAt: t0, expiresAt };
  const ctx = { actor: { by: 'extraction' as const }, now: t0 };
  const vegetarian = await me.writeFact(fact('diet', 'vegetarian', common), ctx);
  const city = await me.writeFact(fact('lives in', 'Lisbon', { ...common, source: userSource('s-0', 'turn-1', 1) }), ctx);
  const concise = await me.writePreference(preference('concise answers', common), ctx);
  return { me, vegetarian: vegetarian.memoryId, city: city.memoryId, concise: concise.memoryId };
}

describe('forget_memory tool', () => {
  it('is destructive, so the session asks the user to confirm before it runs', () => {
    const spec = nativeRunnable(tool).spec;
    expect(spec).toMatchObject({ name: 'local_forget_memory', risk: 'destructive' });
  });

  it('forgets by description in two steps: a read-only lookup, then a delete of exactly the ids and texts shown', async () => {
    const ana = await seed({ tenant: 'acme', user: 'ana' });
    const rui = await seed({ tenant: 'acme', user: 'rui' });
    const { matches } = await lookup({ tenant: 'acme', user: 'ana' }, 'that I am vegetarian');
    expect(matches.map((m) => m.id)).toEqual([ana.vegetarian]);
    expect(await ana.me.get(ana.vegetarian)).toMatchObject({ status: 'active' });
    const result = await run({ tenant: 'acme', user: 'ana' }, { memories: matches.map(({ id, text }) => ({ id, text })) });
    expect(result.deleted.map((d) => d.id)).toEqual([ana.vegetarian]);

    expect(await ana.me.get(ana.vegetarian)).toMatchObject({ status: 'deleted' });
    expect(await ana.me.get(ana.city)).toMatchObject({ status: 'active' });
    expect(await rui.me.get(rui.vegetarian)).toMatchObject({ status: 'active' });
    const audit = (await ana.me.auditTrail(ana.vegetarian)).at(-1);
    expect(audit).toMatchObject({ action: 'delete', actor: { by: 'tool', sessionId: 's-1', toolCallId: 's-1:turn-3:call_f' }, reason: `forget_memory: ${ana.vegetarian}` });
  });

  it('finds and forgets a memory older than the newest 500, by description and by the short id a prompt shows', async () => {
    const namespace = { tenant: 'acme', user: 'many' };
    const seeded = await seed(namespace);
    // 510 newer memories, written as the repository stores them (copies of one with other ids and later times).
    const memories = db.collection(MEMORIES_COLLECTION);
    const template = (await memories.findOne({ _id: seeded.concise as never }))!;
    const newer = Array.from({ length: 510 }, (_, i) => ({
      ...template,
      _id: `mem_${(0xf00000 + i).toString(16)}${'0'.repeat(18)}`,
      text: `Newer memory ${i}.`,
      updatedAt: new Date(t0.getTime() + (i + 1) * 1000),
    }));
    await memories.insertMany(newer as never[]);
    expect((await seeded.me.list({ limit: 500 })).memories.map((m) => m._id)).not.toContain(seeded.vegetarian);
    // Before, both looked at the newest 500 only: "no active memory" for the short id, and nothing matched.
    const { matches } = await lookup(namespace, 'that I am vegetarian');
    expect(matches.map((m) => m.id)).toEqual([seeded.vegetarian]);
    const short = `mem:${seeded.vegetarian.slice(4, 8)}`;
    const result = await run(namespace, { memories: [{ id: short, text: matches[0]!.text }] });
    expect(result.deleted.map((d) => d.id)).toEqual([seeded.vegetarian]);
  });

  it('run again with the same call (an attempt that deleted some, then timed out or died), it deletes the rest and reports all of them', async () => {
    const namespace = { tenant: 'acme', user: 'retry' };
    const seeded = await seed(namespace);
    const texts = new Map<string, string>();
    for (const id of [seeded.vegetarian, seeded.city]) texts.set(id, (await seeded.me.get(id))!.text);
    const memories = [...texts].map(([id, text]) => ({ id, text }));
    // The first attempt got as far as the first delete.
    const actor = { by: 'tool' as const, sessionId: 's-1', toolCallId: 's-1:turn-3:call_f' };
    await seeded.me.delete(seeded.vegetarian, 'forget_memory', { actor, now: t0 });
    const retried = await run(namespace, { memories });
    expect(retried.deleted.map((d) => d.id)).toEqual([seeded.vegetarian, seeded.city]);
    expect(await seeded.me.get(seeded.city)).toMatchObject({ status: 'deleted' });
    // And once more, as after a lost result: the same answer, nothing else touched.
    expect((await run(namespace, { memories })).deleted.map((d) => d.id)).toEqual([seeded.vegetarian, seeded.city]);
    expect(await seeded.me.get(seeded.concise)).toMatchObject({ status: 'active' });
    // A memory deleted by anyone else is still "no active memory" for this call.
    await seeded.me.delete(seeded.concise, 'by the user', { actor: { by: 'user' }, now: t0 });
    const concise = (await seeded.me.get(seeded.concise))!;
    await expect(run(namespace, { memories: [{ id: seeded.concise, text: concise.text }] })).rejects.toThrow(/no active memory/);
  });

  it('never takes a similar memory for the one described, and deletes nothing when the text shown is not the memory\'s', async () => {
    const namespace = { tenant: 'acme', user: 'zq' };
    const me = repo.forNamespace(namespace);
    const common = { source: userSource('s-0', 'turn-1'), statedAt: t0, expiresAt };
    const wctx = { actor: { by: 'extraction' as const }, now: t0 };
    const zero = await me.writeFact(fact('hometown', 'CityZq0x', common), wctx);
    const three = await me.writeFact(fact('birthplace', 'CityZq3x', { ...common, source: userSource('s-0', 'turn-1', 1) }), wctx);
    const { matches } = await lookup(namespace, 'hometown CityZq0x');
    expect(matches.map((m) => m.id)).toEqual([zero.memoryId]);
    // A model that names the other memory's id under the text the user approved deletes nothing.
    await expect(run(namespace, { memories: [{ id: three.memoryId, text: matches[0]!.text }] })).rejects.toThrow(/nothing was deleted/);
    expect(await me.get(three.memoryId)).toMatchObject({ status: 'active' });
    await run(namespace, { memories: [{ id: zero.memoryId, text: matches[0]!.text }] });
    expect(await me.get(zero.memoryId)).toMatchObject({ status: 'deleted' });
    expect(await me.get(three.memoryId)).toMatchObject({ status: 'active' });
  });

  it('deletes by the id the model cites, and never another user\'s memory with that id', async () => {
    const sofia = await seed({ tenant: 'acme', user: 'sofia' });
    const other = await seed({ tenant: 'globex', user: 'sofia' });
    const short = `mem:${sofia.concise.slice(4, 10)}`;
    const text = (await sofia.me.get(sofia.concise))!.text;
    const result = await run({ tenant: 'acme', user: 'sofia' }, { memories: [{ id: short, text }] });
    expect(result.deleted.map((d) => d.id)).toEqual([sofia.concise]);
    const otherText = (await other.me.get(other.city))!.text;
    await expect(run({ tenant: 'acme', user: 'sofia' }, { memories: [{ id: other.city, text: otherText }] })).rejects.toThrow(/no active memory/);
    expect(await other.me.get(other.city)).toMatchObject({ status: 'active' });
  });

  it('finds nothing when nothing matches, and a delete needs at least one memory', async () => {
    await seed({ tenant: 'acme', user: 'lu' });
    const found = await lookup({ tenant: 'acme', user: 'lu' }, 'my favourite football team');
    expect(found.matches).toEqual([]);
    expect(() => tool.parameters.parse({ memories: [] })).toThrow();
    expect(() => tool.parameters.parse({ description: 'my diet' })).toThrow();
  });
});
