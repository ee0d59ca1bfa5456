import path from 'node:path';
import { parseMcpConfig } from '../activities/mcp/mcp-config';
import { McpConnection } from '../activities/mcp/mcp-connection';
import OpenAI from 'openai';
import { createEmbedder, embedMemories } from '../activities/memory/embedder';
import type { FactInput } from '../activities/memory/memory-docs';
import { createMemoryActivities } from '../activities/memory/memory-activities';
import { defaultMemoryConfig } from '../activities/memory/memory-config';
import { MemoryRepository } from '../activities/memory/memory-repository';
import type { ChatRequest, StepResponse } from '../scripted-model';
import { messageText } from '../scripted-model';
import { PROJECT_ROOT, recordingLogger } from '../test/support/mcp-servers';
import { DAY, fact, userSource } from '../test/support/memory-fixtures';
import type { ProbeLog } from '../test/support/probe-tools';
import { isSummaryRequest, scriptedSummary } from '../test/support/scripted-summarizer';
import { sessionOptions, uniqueId, type TestEnv } from '../test/support/test-env';
import { workflowIdFor } from '../workflows/messages';
import { runRecallSet } from '../bench/support/recall-set-bench';
import { labelledSet } from './memory-set';
import { RECALL_SETS } from './recall-set';

/** One figure of a capability, with the thresholds it is judged against. */
export interface Figure {
  name: string;
  value: number;
  unit: string;
  /** Whether higher is better. */
  higherIsBetter: boolean;
  usable: number;
  good: number;
}

export interface CapabilityResult {
  capability: 'sessions' | 'tools' | 'mcp' | 'memory' | 'isolation';
  title: string;
  figures: Figure[];
  notes: string[];
}

export interface EvalContext {
  env: TestEnv;
  probe: ProbeLog;
  small: boolean;
  log(line: string): void;
}

const say = (text: string): StepResponse => ({ kind: 'text', text });

/** Facts stated early must still reach the model after the window has moved past them. */
export async function evaluateSessions(ctx: EvalContext): Promise<CapabilityResult> {
  const sessionId = uniqueId('eval-facts');
  const facts = ['Alpha plan', 'Beta plan', 'Gamma plan', 'ORD-7781', '2026-12-24'];
  const fillers = ctx.small ? 4 : 8;
  const options = sessionOptions(sessionId, { limits: { windowMaxTurns: 2, windowMaxTokens: 100_000 } });
  await ctx.env.agent.ask(options, { text: `Here are the options: 1. ${facts[0]} 2. ${facts[1]} 3. ${facts[2]}. My order id is ${facts[3]} and the deadline is ${facts[4]}.` });
  for (let i = 0; i < fillers; i++) await ctx.env.agent.ask(options, { text: `Unrelated question number ${i + 1}: how is the weather?` });
  await ctx.env.agent.ask(options, { text: 'Which options did I list, what is my order id and when is the deadline?' });
  const requests = ctx.env.model.requestsFor(sessionId).filter((r) => !isSummaryRequest(r.body as ChatRequest));
  const last = requests.at(-1)?.body as ChatRequest | undefined;
  const prompt = (last?.messages ?? []).map((m) => messageText(m)).join('\n');
  const kept = facts.filter((f) => prompt.includes(f));
  const view = await ctx.env.agent.getSession(sessionId);
  await ctx.env.agent.end(sessionId);
  return {
    capability: 'sessions',
    title: 'Sessions: facts kept after the window moves',
    figures: [
      { name: 'facts kept in the prompt', value: kept.length / facts.length, unit: 'share', higherIsBetter: true, usable: 0.8, good: 1 },
      { name: 'turns folded into the summary', value: view.counters.summariesFolded, unit: 'folds', higherIsBetter: true, usable: 1, good: 1 },
    ],
    notes: [
      `Window of 2 turns, ${fillers} filler turns after the facts; ${kept.length} of ${facts.length} facts (numbered options, an id, a deadline) were in the last prompt${kept.length < facts.length ? `; missing: ${facts.filter((f) => !kept.includes(f)).join(', ')}` : ''}.`,
    ],
  };
}

/** The scripted model's answer for the sessions check: summaries folded by the scripted summarizer, plain text otherwise. */
export function evalModel(req: ChatRequest): StepResponse {
  if (isSummaryRequest(req)) return scriptedSummary(req);
  return say('Noted.');
}

/** Tool calls that should succeed do; calls past their timeout are cut at the timeout. */
export async function evaluateTools(ctx: EvalContext): Promise<CapabilityResult> {
  const okCalls = ctx.small ? 6 : 20;
  const slowCalls = ctx.small ? 2 : 6;
  const sessionId = uniqueId('eval-tools');
  const calls = [
    ...Array.from({ length: okCalls }, (_, i) => ({ id: `ok_${i}`, name: 'local_note', arguments: { text: `note ${i}` } })),
    ...Array.from({ length: slowCalls }, (_, i) => ({ id: `slow_${i}`, name: 'local_slow', arguments: {} })),
  ];
  // One call per step: each is its own ReAct step, as a model calling tools one by one would do.
  ctx.env.model.script(
    [...calls.map((c) => ({ respond: { kind: 'tool_calls' as const, calls: [c] } })), { respond: say('All done.') }],
    { lane: sessionId },
  );
  const events: Array<{ toolCallId: string; ok: boolean; errorType?: string; durationMs: number }> = [];
  const options = sessionOptions(sessionId, { limits: { maxSteps: calls.length + 1 } });
  const turn = await ctx.env.agent.ask(options, { text: 'run the tools' });
  for await (const e of ctx.env.agent.events(sessionId)) {
    if (e.event.type === 'tool_call_result') events.push({ toolCallId: e.event.toolCallId, ok: e.event.ok, ...(e.event.errorType ? { errorType: e.event.errorType } : {}), durationMs: e.event.durationMs });
    if (e.event.type === 'turn_completed' && e.event.turnId === turn.turnId) break;
  }
  await ctx.env.agent.end(sessionId);
  const okResults = events.filter((e) => e.toolCallId.startsWith('ok_'));
  const slowResults = events.filter((e) => e.toolCallId.startsWith('slow_'));
  const timeouts = slowResults.filter((e) => e.errorType === 'ToolTimeout');
  const worstTimeoutMs = Math.max(0, ...timeouts.map((e) => e.durationMs));
  return {
    capability: 'tools',
    title: 'Tools: success and timeout rates',
    figures: [
      { name: 'success rate of calls that should succeed', value: okResults.filter((e) => e.ok).length / okCalls, unit: 'share', higherIsBetter: true, usable: 0.95, good: 1 },
      { name: 'timeouts caught (calls past their 1 s timeout)', value: timeouts.length / slowCalls, unit: 'share', higherIsBetter: true, usable: 0.95, good: 1 },
      { name: 'slowest timeout, over the 1 s limit', value: worstTimeoutMs / 1000, unit: 's', higherIsBetter: false, usable: 3, good: 1.5 },
    ],
    notes: [`${okCalls} calls of local_note and ${slowCalls} of local_slow (sleeps 5 s, times out at 1 s, one attempt), one per step of one turn (${turn.turn.outcome}).`],
  };
}

/** How soon a tool list change reaches the catalog, and how soon a killed server is back. */
export async function evaluateMcp(ctx: EvalContext): Promise<CapabilityResult> {
  const name = `eval_${uniqueId('g').slice(2).replace(/-/g, '_')}`;
  const server = parseMcpConfig({ mcpServers: { [name]: { command: process.execPath, args: ['--import', 'tsx', path.join(PROJECT_ROOT, 'test/support/growing-mcp-server.ts')], cwd: PROJECT_ROOT } } }, { env: {} }).servers[0]!;
  const connection = new McpConnection(server, { connectTimeoutMs: 15_000, refreshIntervalMs: 600_000, logger: recordingLogger(), reconnect: { initialDelayMs: 100, maxDelayMs: 1_000 } });
  const syncMs: number[] = [];
  const reconnectMs: number[] = [];
  try {
    if (!(await connection.start())) throw new Error(`the MCP server ${name} did not start`);
    const call = (tool: string) => connection.callTool(tool, {}, { signal: new AbortController().signal, timeoutMs: 15_000 });
    for (let i = 1; i <= (ctx.small ? 2 : 5); i++) {
      const before = performance.now();
      await call('grow');
      while (!connection.tools.some((t) => t.name === `extra_${i}`)) await new Promise((r) => setTimeout(r, 5));
      syncMs.push(performance.now() - before);
    }
    for (let i = 0; i < (ctx.small ? 1 : 3); i++) {
      const killedAt = performance.now();
      process.kill(connection.pid!, 'SIGKILL');
      while (connection.status === 'ready') await new Promise((r) => setTimeout(r, 5));
      while ((connection.status as string) !== 'ready') await new Promise((r) => setTimeout(r, 5));
      reconnectMs.push(performance.now() - killedAt);
    }
  } finally {
    await connection.close();
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
  return {
    capability: 'mcp',
    title: 'MCP: tool sync delay and reconnect time',
    figures: [
      { name: 'tool sync delay (call that changes the list, to the catalog holding it), median', value: median(syncMs) / 1000, unit: 's', higherIsBetter: false, usable: 5, good: 1 },
      { name: 'reconnect time after the server process is killed, median', value: median(reconnectMs) / 1000, unit: 's', higherIsBetter: false, usable: 10, good: 2 },
    ],
    notes: [`A real stdio server (test/support/growing-mcp-server.ts): ${syncMs.length} tool list changes, ${reconnectMs.length} SIGKILLs. Sync delays ${syncMs.map((m) => Math.round(m)).join(', ')} ms; reconnects ${reconnectMs.map((m) => Math.round(m)).join(', ')} ms.`],
  };
}

/**
 * Recall precision and recall through the worker's embedder (the configured
 * EMBEDDING_MODEL, else the default local models): on the labelled set of
 * near-topic pairs, and on the paraphrase recall sets in English and Chinese
 * (evaluation/recall-set: questions sharing no content word with their
 * memory); another user's copies never recalled; citations of ids never
 * recalled caught.
 */
export async function evaluateMemory(ctx: EvalContext): Promise<CapabilityResult> {
  const set = labelledSet(ctx.small ? 50 : 200);
  const { model, memory: memoryConfig } = ctx.env.config;
  const openai = new OpenAI({ baseURL: model.baseUrl, apiKey: model.apiKey ?? 'not-needed', maxRetries: 0 });
  const embedder = createEmbedder({ openai, embeddingModel: model.embeddingModel, dimensions: memoryConfig.embeddingDims });
  const repo = new MemoryRepository(ctx.env.db);
  await repo.ensureIndexes();
  const now = new Date();
  const user = uniqueId('eval-user');
  const other = uniqueId('eval-other');
  const common = { source: userSource('eval', 'turn-1'), statedAt: now, expiresAt: new Date(now.getTime() + 30 * DAY) };
  // Embedded as the worker embeds what it stores, with the embedder recall uses.
  const own = set.facts.map((f) => fact(f.predicate, f.value, common));
  // The same facts with other values for another user: they must never come back.
  const others = set.facts.map((f) => fact(f.predicate, `${f.value} (other)`, common));
  const vectors = await embedMemories(embedder, [...own, ...others].map((f) => f.text));
  const embedded = (f: FactInput, i: number): FactInput => ({ ...f, embedding: vectors[i] ?? [], embedderId: embedder.id });
  for (const [i, f] of own.entries()) {
    await repo.forNamespace({ tenant: 'eval', user }).writeFact(embedded(f, i), { actor: { by: 'import' }, now });
    await repo.forNamespace({ tenant: 'eval', user: other }).writeFact(embedded(others[i]!, own.length + i), { actor: { by: 'import' }, now });
  }
  const memory = createMemoryActivities({ db: ctx.env.db, openai: undefined as never, embedder, modelName: 'unused', config: defaultMemoryConfig(), log: { debug: () => undefined, warn: () => undefined } });
  let strongTotal = 0;
  let strongExpected = 0;
  let found = 0;
  let top1 = 0;
  let leaked = 0;
  for (const [i, q] of set.queries.entries()) {
    const r = await memory.recallMemories({ namespace: { tenant: 'eval', user }, query: q.query, sessionId: 'eval', turnId: `turn-${i}` });
    const expectedText = `The user's ${q.expected} is `;
    strongTotal += r.strong.length;
    strongExpected += r.strong.filter((m) => m.text.startsWith(expectedText)).length;
    if ([...r.strong, ...r.weak].some((m) => m.text.startsWith(expectedText))) found += 1;
    if ([...r.strong, ...r.weak][0]?.text.startsWith(expectedText)) top1 += 1;
    leaked += [...r.strong, ...r.weak].filter((m) => m.text.includes('(other)')).length;
  }
  const citations = await citationChecks(ctx);
  const paraphrase: Array<{ language: string; cases: number; precision: number; recall: number; top1: number; forbidden: number }> = [];
  // The small run (CI) asks the first 40 questions of each set, over all its memories.
  for (const recallSet of RECALL_SETS.map((r) => (ctx.small ? { ...r, cases: r.cases.slice(0, 40) } : r))) {
    // Each set in a database of its own: its namespaces are the set's people, and the run wants them empty.
    const db = ctx.env.db.client.db(`${ctx.env.db.databaseName}_${recallSet.language}`);
    try {
      const r = await runRecallSet(db, openai, recallSet, embedder, defaultMemoryConfig(), now);
      paraphrase.push({ language: recallSet.language, cases: r.cases, precision: r.precision_at_strong ?? 1, recall: r.recall_at_5, top1: r.top1_accuracy, forbidden: r.forbidden_returned });
    } finally {
      await db.dropDatabase().catch(() => undefined);
    }
  }
  const name = (language: string) => (language === 'zh' ? 'Chinese' : 'English');
  return {
    capability: 'memory',
    title: 'Memory: recall precision and recall, isolation, citation checks',
    figures: [
      { name: 'precision of the strong tier', value: strongTotal ? strongExpected / strongTotal : 0, unit: 'share', higherIsBetter: true, usable: 0.8, good: 0.9 },
      { name: 'recall (expected memory in strong or weak)', value: found / set.queries.length, unit: 'share', higherIsBetter: true, usable: 0.6, good: 0.8 },
      { name: 'top-1 accuracy', value: top1 / set.queries.length, unit: 'share', higherIsBetter: true, usable: 0.6, good: 0.8 },
      ...paraphrase.flatMap((p) => [
        { name: `${name(p.language)} paraphrases: precision of the strong tier`, value: p.precision, unit: 'share' as const, higherIsBetter: true, usable: 0.8, good: 0.9 },
        { name: `${name(p.language)} paraphrases: expected memory in the first 5`, value: p.recall, unit: 'share' as const, higherIsBetter: true, usable: 0.6, good: 0.8 },
        { name: `${name(p.language)} paraphrases: top-1 accuracy`, value: p.top1, unit: 'share' as const, higherIsBetter: true, usable: 0.6, good: 0.8 },
      ]),
      { name: "another user's memories recalled", value: leaked + paraphrase.reduce((n, p) => n + p.forbidden, 0), unit: 'memories', higherIsBetter: false, usable: 0, good: 0 },
      { name: 'citations of unrecalled ids caught', value: citations.caught / citations.cases, unit: 'share', higherIsBetter: true, usable: 1, good: 1 },
    ],
    notes: [
      `${set.queries.length} labelled queries over ${set.facts.length} facts (near-topic pairs such as home city / birth city), embedder ${embedder.id} (the worker's: EMBEDDING_MODEL, else the local models).`,
      ...paraphrase.map((p) => `${name(p.language)} paraphrase set: ${p.cases} cases (questions that share no content word with their memory; stale, superseded, deleted and other people's memories among them, none of which may come back: ${p.forbidden} did).`),
      `${citations.cases} answers citing a memory id that was not recalled: ${citations.caught} flagged by the citation check.`,
    ],
  };
}

async function citationChecks(ctx: EvalContext): Promise<{ cases: number; caught: number }> {
  const cases = ctx.small ? 2 : 5;
  let caught = 0;
  for (let i = 0; i < cases; i++) {
    const sessionId = uniqueId('eval-cite');
    const user = uniqueId('eval-cite-user');
    ctx.env.model.script(
      [
        { respond: say(`As you told me before [mem:dead${i}beef], the answer is yes.`) },
        { respond: say(`As you told me before [mem:dead${i}beef], still yes.`) },
      ],
      { lane: sessionId },
    );
    const agent = ctx.env.agent.as({ tenant: 'eval', user });
    await agent.ask(sessionOptions(sessionId, { namespace: { tenant: 'eval', user }, memory: { enabled: true } }), { text: 'Is it yes?' });
    const view = await agent.getSession(sessionId);
    if (view.counters.citationsFlagged + view.counters.citationsRegenerated > 0) caught += 1;
    await agent.end(sessionId);
    await ctx.env.client.workflow.getHandle(workflowIdFor(sessionId)).result();
  }
  return { cases, caught };
}

/** Everything another tenant tries on a session and its user's data is refused. */
export async function evaluateIsolation(ctx: EvalContext): Promise<CapabilityResult> {
  const sessionId = uniqueId('eval-iso');
  ctx.env.model.script([{ respond: say('Private answer.') }], { lane: sessionId });
  await ctx.env.agent.ask(sessionOptions(sessionId), { text: 'private question' });
  const stranger = ctx.env.agent.as({ tenant: 'evil', user: 'eve' });
  const colleague = ctx.env.agent.as({ tenant: 'acme', user: 'bob' });
  const attempts: Array<[string, () => Promise<unknown>]> = [];
  for (const [who, agent] of [['another tenant', stranger], ['a colleague', colleague]] as const) {
    attempts.push(
      [`${who}: getSession`, () => agent.getSession(sessionId)],
      [`${who}: events`, () => agent.events(sessionId).next()],
      [`${who}: send`, () => agent.send(sessionOptions(sessionId), { text: 'let me in' })],
      [`${who}: approve`, () => agent.approve(sessionId, 'call_x')],
      [`${who}: listMemories`, () => agent.listMemories({ namespace: { tenant: 'acme', user: 'ana' } })],
      [`${who}: getUsage`, () => agent.getUsage({ tenant: 'acme', user: 'ana' })],
    );
  }
  let refused = 0;
  const leaks: string[] = [];
  for (const [name, attempt] of attempts) {
    try {
      await attempt();
      leaks.push(name);
    } catch (err) {
      if ((err as Error).name === 'NotAuthorizedError') refused += 1;
      else leaks.push(`${name} (${(err as Error).name})`);
    }
  }
  await ctx.env.agent.end(sessionId);
  return {
    capability: 'isolation',
    title: 'Isolation: another tenant and a colleague',
    figures: [{ name: 'cross-principal attempts refused', value: refused / attempts.length, unit: 'share', higherIsBetter: true, usable: 1, good: 1 }],
    notes: [`${attempts.length} attempts on another user's session and data${leaks.length ? `; not refused as NotAuthorized: ${leaks.join(', ')}` : ', each refused with NotAuthorizedError'}.`],
  };
}
