import type { Db } from 'mongodb';
import { defaultThresholds } from '../../activities/memory/embedder';
import { MemoryRepository } from '../../activities/memory/memory-repository';
import { forgetMemoryTool } from '../../activities/tools/forget-memory-tool';
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

beforeAll(async () => {
  ({ db, close } = await openTestDb('memory_forget'));
  repo = new MemoryRepository(db);
  tool = forgetMemoryTool({ repo, embedder, thresholds: defaultThresholds(embedder.id), clock: () => new Date(t0.getTime() + DAY) });
});
afterAll(async () => close());

function run(namespace: UserNamespace, args: Record<string, unknown>) {
  const ctx: ToolRunContext = { signal: new AbortController().signal, idempotencyKey: 's-1:turn-3:call_f', sessionId: 's-1', namespace, heartbeat: () => undefined };
  return tool.execute(tool.parameters.parse(args), ctx) as Promise<{ deleted: Array<{ id: string; text: string }>; count: number; possibleMatches?: unknown[] }>;
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

  it('deletes the user\'s matching memory by description, and only within the session\'s namespace', async () => {
    const ana = await seed({ tenant: 'acme', user: 'ana' });
    const rui = await seed({ tenant: 'acme', user: 'rui' });
    const result = await run({ tenant: 'acme', user: 'ana' }, { description: 'that I am vegetarian' });
    expect(result.deleted.map((d) => d.id)).toEqual([ana.vegetarian]);

    expect(await ana.me.get(ana.vegetarian)).toMatchObject({ status: 'deleted' });
    expect(await ana.me.get(ana.city)).toMatchObject({ status: 'active' });
    expect(await rui.me.get(rui.vegetarian)).toMatchObject({ status: 'active' });
    const audit = (await ana.me.auditTrail(ana.vegetarian)).at(-1);
    expect(audit).toMatchObject({ action: 'delete', actor: { by: 'tool', sessionId: 's-1', toolCallId: 's-1:turn-3:call_f' }, reason: 'forget_memory: that I am vegetarian' });
  });

  it('deletes by the id the model cites, and never another user\'s memory with that id', async () => {
    const sofia = await seed({ tenant: 'acme', user: 'sofia' });
    const other = await seed({ tenant: 'globex', user: 'sofia' });
    const short = `mem:${sofia.concise.slice(4, 10)}`;
    const result = await run({ tenant: 'acme', user: 'sofia' }, { memory_id: short });
    expect(result.deleted.map((d) => d.id)).toEqual([sofia.concise]);
    await expect(run({ tenant: 'acme', user: 'sofia' }, { memory_id: other.city })).rejects.toThrow(/no active memory/);
    expect(await other.me.get(other.city)).toMatchObject({ status: 'active' });
  });

  it('deletes nothing when nothing matches, and asks for an id or a description', async () => {
    await seed({ tenant: 'acme', user: 'lu' });
    const result = await run({ tenant: 'acme', user: 'lu' }, { description: 'my favourite football team' });
    expect(result.count).toBe(0);
    await expect(run({ tenant: 'acme', user: 'lu' }, {})).rejects.toThrow(/memory_id or description/);
  });
});
