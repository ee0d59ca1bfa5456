import { ApplicationFailure } from '@temporalio/common';
import { PromptPartResolver, type PartOwner, type RunPartsReader } from '../../activities/prompt-part-resolver';
import { PROMPT_PART_MISSING, PromptLedger, contentTag, promptDigest, type PromptByRef } from '../../workflows/prompt-parts';

/*
 * The model activity's prompt parts, resolved: inline parts, this worker's
 * memory, then the run's history (here a reader standing in for it; the real
 * one runs against the dev server in test/integration/prompt-by-ref.test.ts).
 */

/** A reader standing in for the run's history: the parts given, and how often it was read. */
function historyOf(parts: Record<string, unknown>): { read: RunPartsReader; reads: PartOwner[]; wanted: string[][] } {
  const reads: PartOwner[] = [];
  const wanted: string[][] = [];
  return {
    reads,
    wanted,
    read: async (owner, ids) => {
      reads.push(owner);
      wanted.push([...ids].sort());
      return new Map(Object.entries(parts).map(([id, value]) => [id, JSON.stringify(value)]));
    },
  };
}

const run = { workflowId: 'wf-r', runId: 'wf-r-run1' };
const system = { role: 'system', content: 'You are helpful.' };
const tool = { name: 'local_calculate', description: 'adds', parameters: { type: 'object' } };
const user = { role: 'user', content: 'what is 6 times 7?' };

async function failureOf(promise: Promise<unknown>): Promise<ApplicationFailure> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApplicationFailure);
  return err as ApplicationFailure;
}

describe('resolving a prompt by reference', () => {
  it('uses the inline parts and this worker\'s memory, without reading the history', async () => {
    const history = historyOf({});
    const store = new PromptPartResolver({ readRun: history.read });
    const first = await store.resolve(run, { messages: ['p1', 'p2'], tools: ['p3'], parts: { p1: system, p2: user, p3: tool } });
    expect(first).toEqual({ messages: [system, user], tools: [tool] });
    const next = await store.resolve(run, { messages: ['p1', 'p2', 'p4'], tools: ['p3'], parts: { p4: { role: 'assistant', content: '42' } } });
    expect(next.messages).toEqual([system, user, { role: 'assistant', content: '42' }]);
    expect(next.tools).toEqual([tool]);
    expect(history.reads).toEqual([]);
  });

  it('parses a held part once: later prompts get the same frozen value, so no caller can change what the next step sends', async () => {
    const store = new PromptPartResolver({ readRun: historyOf({}).read });
    const first = await store.resolve(run, { messages: ['p1', 'p2'], tools: ['p3'], parts: { p1: system, p2: user, p3: tool } });
    const next = await store.resolve(run, { messages: ['p1', 'p2'], tools: ['p3'], parts: {} });
    expect(next.messages[0]).toBe(first.messages[0]);
    expect(next.tools[0]).toBe(first.tools[0]);
    expect(Object.isFrozen(next.messages[1])).toBe(true);
    expect(() => {
      (next.tools[0] as unknown as { parameters: { type: string } }).parameters.type = 'string';
    }).toThrow(TypeError);
    // The input's own objects are not the held ones: changing them later changes nothing held.
    expect(next.messages[0]).not.toBe(system);
    expect(next.messages[0]).toEqual(system);
  });

  it('counts a parsed part against the cache\'s bytes as much again as its text', async () => {
    const parts = { p1: system, p2: user, p3: tool };
    const textBytes = Object.values(parts).reduce((n, v) => n + JSON.stringify(v).length, 0);
    const history = historyOf(parts);
    // Room for the three texts, not for their parsed copies as well: the oldest go once they are parsed.
    const store = new PromptPartResolver({ readRun: history.read, cacheBytes: textBytes + 1 });
    await store.resolve(run, { messages: ['p1', 'p2'], tools: ['p3'], parts });
    await store.resolve(run, { messages: ['p1', 'p2'], tools: ['p3'], parts: {} });
    expect(history.reads).toEqual([run]);
  });

  it('reads the run\'s history for the parts this worker lacks, and keeps every part it read from then on', async () => {
    const history = historyOf({ p1: system, p2: user, p3: tool, p4: { role: 'assistant', content: 'earlier' } });
    const store = new PromptPartResolver({ readRun: history.read });
    const resolved = await store.resolve(run, { messages: ['p1', 'p2'], tools: ['p3'], parts: { p2: user } });
    expect(resolved).toEqual({ messages: [system, user], tools: [tool] });
    expect(history.reads).toEqual([run]);
    // Asked for what it lacked, not for what the input carried.
    expect(history.wanted).toEqual([['p1', 'p3']]);
    // p4 was not named by the first call, but came with the same read.
    const later = await store.resolve(run, { messages: ['p1', 'p4'], tools: [], parts: {} });
    expect(later.messages).toEqual([system, { role: 'assistant', content: 'earlier' }]);
    expect(history.reads).toHaveLength(1);
    // Ids are per run: another run's p1 is another part.
    const other = { workflowId: 'wf-r', runId: 'wf-r-run2' };
    await store.resolve(other, { messages: ['p1'], tools: [], parts: {} });
    expect(history.reads).toEqual([run, other]);
  });

  it('fails as PromptPartMissing, not retryable, naming the ids that no call of the run carried', async () => {
    const store = new PromptPartResolver({ readRun: historyOf({ p1: system }).read });
    const failure = await failureOf(store.resolve(run, { messages: ['p1', 'p7', 'p9'], tools: [], parts: {} }));
    expect(failure.type).toBe(PROMPT_PART_MISSING);
    expect(failure.nonRetryable).toBe(true);
    expect(failure.message).toContain('2 part(s) that no earlier model call of this run carried (p7, p9)');
  });

  it('fails as PromptPartMissing, not retryable, saying why, when the history cannot be read', async () => {
    const store = new PromptPartResolver({
      readRun: async () => {
        throw new Error('14 UNAVAILABLE: history service unreachable');
      },
    });
    const failure = await failureOf(store.resolve(run, { messages: ['p1'], tools: [], parts: {} }));
    expect(failure.type).toBe(PROMPT_PART_MISSING);
    expect(failure.nonRetryable).toBe(true);
    expect(failure.message).toContain("the run's history could not be read (14 UNAVAILABLE: history service unreachable)");
  });

  it('checks a prompt rebuilt from held or read parts against the workflow\'s digest, and fails as PromptPartMissing when another text stood under an id', async () => {
    const tags = (...values: unknown[]) => promptDigest(values.map((v) => contentTag(JSON.stringify(v))));
    // What a reset run's prefix could hold under p2: the text an older version built there.
    const reworded = { role: 'user', content: 'what is 6 times 8?' };
    const store = new PromptPartResolver({ readRun: historyOf({ p1: system, p2: reworded }).read });
    const failure = await failureOf(store.resolve(run, { messages: ['p1', 'p2'], tools: [], parts: {}, digest: tags(system, user) }));
    expect(failure.type).toBe(PROMPT_PART_MISSING);
    expect(failure.nonRetryable).toBe(true);
    expect(failure.message).toContain(`digest ${tags(system, user)}`);
    // The same parts, read from a history that holds what the workflow built: the digest matches.
    const faithful = new PromptPartResolver({ readRun: historyOf({ p1: system, p2: user }).read });
    expect(await faithful.resolve(run, { messages: ['p1', 'p2'], tools: [], parts: {}, digest: tags(system, user) })).toEqual({ messages: [system, user], tools: [] });
    // The resend carries every part inline: that is the prompt the workflow built, held texts are replaced.
    expect(await store.resolve(run, { messages: ['p1', 'p2'], tools: [], parts: { p1: system, p2: user }, digest: tags(system, user) })).toEqual({ messages: [system, user], tools: [] });
    expect(await store.resolve(run, { messages: ['p1', 'p2'], tools: [], parts: {}, digest: tags(system, user) })).toEqual({ messages: [system, user], tools: [] });
    // A prompt all inline is taken as sent: nothing in it came from this worker.
    expect(await store.resolve(run, { messages: ['p1'], tools: [], parts: { p1: system }, digest: '000000' })).toEqual({ messages: [system], tools: [] });
  });

  it('reads the history again, newest first, when a text held in memory makes the digest fail, and keeps what it read', async () => {
    const tags = (...values: unknown[]) => promptDigest(values.map((v) => contentTag(JSON.stringify(v))));
    const reworded = { role: 'user', content: 'what is 6 times 8?' };
    // The history holds what the session resent on another worker: the text the workflow builds now.
    const history = historyOf({ p1: system, p2: user });
    const store = new PromptPartResolver({ readRun: history.read });
    // This worker held the older text under p2.
    await store.resolve(run, { messages: ['p1', 'p2'], tools: [], parts: { p1: system, p2: reworded } });
    const resolved = await store.resolve(run, { messages: ['p1', 'p2'], tools: [], parts: {}, digest: tags(system, user) });
    expect(resolved.messages).toEqual([system, user]);
    expect(history.reads).toHaveLength(1);
    // Held from then on.
    await store.resolve(run, { messages: ['p1', 'p2'], tools: [], parts: {}, digest: tags(system, user) });
    expect(history.reads).toHaveLength(1);
  });

  it('checks tools as well as messages: another tool text under an id fails the digest', async () => {
    const tags = (...values: unknown[]) => promptDigest(values.map((v) => contentTag(JSON.stringify(v))));
    const widened = { ...tool, description: 'adds and multiplies' };
    const store = new PromptPartResolver({ readRun: historyOf({ p1: system, p3: widened }).read });
    const failure = await failureOf(store.resolve(run, { messages: ['p1'], tools: ['p3'], parts: {}, digest: tags(system, tool) }));
    expect(failure.type).toBe(PROMPT_PART_MISSING);
  });

  it('rebuilds what the workflow\'s ledger built, after the payload round trip, from held and inline parts alike', async () => {
    const ledger = new PromptLedger();
    const schema = { type: 'object', properties: { n: { type: 'number', minimum: -0, maximum: 1e21, default: 0.1 }, tags: { type: 'array', items: [{ type: 'string' }, null] } }, required: ['n'] };
    const tools = [tool, { name: 'mcp_files_read', description: 'liest eine Datei — 读取文件 😀', parameters: schema }];
    const messages: unknown[] = [
      system,
      { role: 'user', content: 'é😀 \ud800 "quoted" \\ back\nslash', note: undefined },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'mcp_files_read', arguments: '{"n":1}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: '{"ok":true}' },
    ];
    // As the activity receives an input: through JSON, as the payload converter sends it.
    const received = (prompt: PromptByRef) => JSON.parse(JSON.stringify(prompt)) as PromptByRef;
    const store = new PromptPartResolver({ readRun: historyOf({}).read });
    const first = ledger.compact(messages, tools);
    await store.resolve(run, received(first.prompt));
    ledger.confirm(first.inline);
    const later = ledger.compact([...messages, { role: 'assistant', content: 'Fertig — 完成.' }], tools);
    expect(Object.keys(later.prompt.parts)).toHaveLength(1);
    const resolved = await store.resolve(run, received(later.prompt));
    expect(resolved.messages).toEqual(JSON.parse(JSON.stringify([...messages, { role: 'assistant', content: 'Fertig — 完成.' }])));
    expect(resolved.tools).toEqual(JSON.parse(JSON.stringify(tools)));
  });

  it('counts a replaced text\'s own size against its memory, so a shorter text makes room', async () => {
    const long = { role: 'user', content: 'x'.repeat(30) };
    const short = { role: 'user', content: 'y' };
    const other = { role: 'user', content: 'z'.repeat(20) };
    const size = (v: unknown) => JSON.stringify(v).length;
    // Room for the short text and the other, each parsed as well (twice its text), not for the long one and the other.
    const room = 2 * (size(short) + size(other)) + 5;
    expect(2 * (size(long) + size(other))).toBeGreaterThan(room);
    const history = historyOf({});
    const store = new PromptPartResolver({ readRun: history.read, cacheBytes: room });
    await store.resolve(run, { messages: ['p1'], tools: [], parts: { p1: long } });
    // The same id sent again with a shorter text (a resend after a mismatch): the held bytes go down.
    await store.resolve(run, { messages: ['p1'], tools: [], parts: { p1: short } });
    await store.resolve(run, { messages: ['p2'], tools: [], parts: { p2: other } });
    // Both fit: p1 is still held, so no history read.
    expect((await store.resolve(run, { messages: ['p1', 'p2'], tools: [], parts: {} })).messages).toEqual([short, other]);
    expect(history.reads).toEqual([]);
  });

  it('lets the least recently used part go first, whichever run holds it: a part a step just used stays', async () => {
    const runA = { workflowId: 'wf-a', runId: 'wf-a-run1' };
    const runB = { workflowId: 'wf-b', runId: 'wf-b-run1' };
    const text = (c: string) => ({ role: 'user', content: c.repeat(12) });
    const [a1, b1, b2, b3] = [text('a'), text('b'), text('c'), text('d')];
    const size = JSON.stringify(a1).length;
    const history = historyOf({ p1: b1 });
    // Room for three parts, each parsed as well (twice its text), and not for a fourth one's text.
    const store = new PromptPartResolver({ readRun: history.read, cacheBytes: 6 * size + 5 });
    await store.resolve(runA, { messages: ['p1'], tools: [], parts: { p1: a1 } });
    await store.resolve(runB, { messages: ['p1'], tools: [], parts: { p1: b1 } });
    await store.resolve(runB, { messages: ['p2'], tools: [], parts: { p2: b2 } });
    // Run A's part, the oldest held, is used again: B's p1 is now the least recently used.
    await store.resolve(runA, { messages: ['p1'], tools: [], parts: {} });
    await store.resolve(runB, { messages: ['p3'], tools: [], parts: { p3: b3 } });
    expect((await store.resolve(runA, { messages: ['p1'], tools: [], parts: {} })).messages).toEqual([a1]);
    expect((await store.resolve(runB, { messages: ['p2', 'p3'], tools: [], parts: {} })).messages).toEqual([b2, b3]);
    expect(history.reads).toEqual([]);
    // B's p1 went: it comes back from the run's history.
    expect((await store.resolve(runB, { messages: ['p1'], tools: [], parts: {} })).messages).toEqual([b1]);
    expect(history.reads).toEqual([runB]);
  });

  it('gives up on a history read that takes longer than its budget, as PromptPartMissing', async () => {
    const store = new PromptPartResolver({ readRun: () => new Promise(() => undefined), readBudgetMs: 200 });
    const started = performance.now();
    const failure = await failureOf(store.resolve(run, { messages: ['p1'], tools: [], parts: {} }));
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(failure.type).toBe(PROMPT_PART_MISSING);
    expect(failure.message).toContain('no answer within 200 ms');
  });
});

