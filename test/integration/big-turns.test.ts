import { workflowIdFor } from '../../workflows/messages';
import { payloadBytes } from '../../workflows/payload-budget';
import type { ChatRequest } from '../../scripted-model';
import { bigReadTool } from '../support/big-read-tool';
import { sessionOptions, startTestEnv, uniqueId, type TestEnv } from '../support/test-env';

/*
 * A session whose turns hold more text than one Temporal payload takes (2 MB):
 * the write of its archive, and the state it carries to its next run, must
 * still fit, or the command fails every workflow task and the session never
 * closes.
 */


let env: TestEnv;
beforeAll(async () => {
  env = await startTestEnv({ name: 'big-turns', extraTools: [bigReadTool], configEnv: { MAX_TOOL_RESULT_CHARS: '200000' } });
});
afterAll(async () => {
  await env?.close();
});

/** `steps` steps of two parallel reads of `chars` characters of 3 bytes each. */
const twoReadSteps = (steps: number, chars: number) =>
  Array.from({ length: steps }, (_, i) => ({
    respond: { kind: 'tool_calls' as const, calls: [0, 1].map((j) => ({ id: `read_${i}_${j}`, name: 'local_big_read', arguments: { n: chars } })) },
  }));

/** How many `holdPromptParts` inputs the session's latest run scheduled. */
async function heldPartInputs(sessionId: string): Promise<number> {
  const history = await env.client.workflow.getHandle(workflowIdFor(sessionId)).fetchHistory();
  return (history.events ?? []).filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'holdPromptParts').length;
}

it('a turn of 2.4 MB of tool results is carried into the next run and archived, its longest texts cut and marked, and the session restores and answers', async () => {
  const sessionId = uniqueId('big');
  // Eight steps of one read of 100,000 characters (300 KB each): each step's results fit the next model call.
  const steps = Array.from({ length: 8 }, (_, i) => ({ respond: { kind: 'tool_calls' as const, calls: [{ id: `read_${i}`, name: 'local_big_read', arguments: { n: 100_000 } }] } }));
  env.model.script([...steps, { respond: { kind: 'text', text: 'Read them all.' } }, { match: { lastUserMessage: 'still there?' }, respond: { kind: 'text', text: 'Yes.' } }], { lane: sessionId });
  const options = sessionOptions(sessionId, { limits: { windowMaxTokens: 2_000_000, maxSteps: 10 } });
  const first = (await env.agent.ask(options, { text: 'read the eight files' })).turn;
  // Not vacuous: the turn ran the eight reads, and their results in the window are over what one payload takes
  // (8 x 100,000 characters of 3 bytes).
  expect({ outcome: first.outcome, toolCalls: first.toolCalls }).toEqual({ outcome: 'completed', toolCalls: 8 });
  expect(payloadBytes('数'.repeat(8 * 100_000))).toBeGreaterThan(2 * 1024 * 1024);
  // The history of such a turn is over what the server suggests for one run: its state was carried into a new one.
  expect((await env.agent.getSession(sessionId)).counters.continuedAsNew).toBe(1);

  await env.agent.end(sessionId, 'archive it');
  const handle = env.client.workflow.getHandle(workflowIdFor(sessionId));
  const closed = await Promise.race([handle.result(), new Promise((resolve) => setTimeout(() => resolve('still open after 30 s'), 30_000))]);
  expect(closed).toMatchObject({ status: 'archived' });

  const again = (await env.agent.ask(options, { text: 'still there?' })).turn;
  expect({ outcome: again.outcome, text: again.text, error: again.error }).toEqual({ outcome: 'completed', text: 'Yes.', error: undefined });
  const restored = (await env.agent.getSession(sessionId)).window.flatMap((t) => t.messages).filter((m) => m.role === 'tool');
  expect(restored).toHaveLength(8);
  for (const m of restored) expect(m.content).toMatch(/^数{16000}… \[cut from 100000 characters: too long to carry into the session's next run\]$/);
}, 90_000);

it('with memory on, a fold and a memory extraction of such a turn get it cut to fit one input, and the session closes archived', async () => {
  const sessionId = uniqueId('big-mem');
  env.model.script([...twoReadSteps(6, 48_000), { respond: { kind: 'text', text: 'Read them all.' } }, { match: { lastUserMessage: 'next one' }, respond: { kind: 'text', text: 'Next.' } }], { lane: sessionId });
  // One turn in the window: the big turn (1.7 MB) is evicted, and folded, when the next one ends.
  const options = sessionOptions(sessionId, { memory: { enabled: true }, limits: { windowMaxTokens: 2_000_000, windowMaxTurns: 1, foldBatchTurns: 1, maxSteps: 10 } });
  expect((await env.agent.ask(options, { text: 'read the twelve files' })).turn.toolCalls).toBe(12);
  expect((await env.agent.ask(options, { text: 'next one' })).turn).toMatchObject({ outcome: 'completed', text: 'Next.' });
  await env.agent.end(sessionId, 'archive it');
  const handle = env.client.workflow.getHandle(workflowIdFor(sessionId));
  // Before, the fold's input (or the extraction's at the close) was over 2 MB: the server failed the run, no archive written.
  const closed = await Promise.race([handle.result(), new Promise((resolve) => setTimeout(() => resolve('still open after 30 s'), 30_000))]);
  expect(closed).toMatchObject({ status: 'archived' });
  const sent = env.model.requests.map((r) => JSON.stringify(r.body));
  expect(sent.filter((body) => body.includes("characters: too long to send in one activity input]")).length).toBeGreaterThanOrEqual(1);
}, 90_000);

it("one step's results over what one model call's input takes go ahead of it in inputs of their own, and the model gets them whole (the turn failed, and the next with it)", async () => {
  const sessionId = uniqueId('wide');
  // Twelve parallel reads of 16,000 characters of 3 bytes: 576 KB of results, over the 512 KB one model call may carry.
  const reads = Array.from({ length: 12 }, (_, i) => ({ id: `read_${i}`, name: 'local_big_read', arguments: { n: 16_000 } }));
  env.model.script(
    [
      { respond: { kind: 'tool_calls', calls: reads } },
      { match: { hasToolResults: true }, respond: { kind: 'text', text: 'Read.' } },
      { match: { lastUserMessage: 'and now?' }, respond: { kind: 'text', text: 'Still here.' } },
    ],
    { lane: sessionId },
  );
  const options = sessionOptions(sessionId, { limits: { windowMaxTokens: 1_000_000 } });
  const turn = (await env.agent.ask(options, { text: 'read the twelve files' })).turn;
  expect({ outcome: turn.outcome, text: turn.text, error: turn.error }).toEqual({ outcome: 'completed', text: 'Read.', error: undefined });
  const sent = (env.model.requestsFor(sessionId).at(-1)!.body as ChatRequest).messages.filter((m) => m.role === 'tool');
  expect(sent.map((m) => m.content)).toEqual(Array.from({ length: 12 }, () => '数'.repeat(16_000)));
  expect(await heldPartInputs(sessionId)).toBe(2);
  expect((await env.agent.ask(options, { text: 'and now?' })).turn).toMatchObject({ outcome: 'completed', text: 'Still here.' });
}, 90_000);

it('a session whose window is over what one query answer takes can still be looked at: its view is cut to fit, saying what it left out', async () => {
  const sessionId = uniqueId('view');
  // Six steps of two reads of 45,000 characters of 3 bytes: 1.6 MB in the window, within the run (no continue-as-new).
  env.model.script([...twoReadSteps(6, 45_000), { respond: { kind: 'text', text: 'Read them all.' } }, { match: { lastUserMessage: 'still there?' }, respond: { kind: 'text', text: 'Yes.' } }], { lane: sessionId });
  const options = sessionOptions(sessionId, { limits: { windowMaxTokens: 2_000_000, maxSteps: 10 } });
  const turn = (await env.agent.ask(options, { text: 'read the twelve files' })).turn;
  expect({ outcome: turn.outcome, toolCalls: turn.toolCalls }).toEqual({ outcome: 'completed', toolCalls: 12 });
  // Before, the server refused the view (a query answer over 2 MB; the client read it as a query not registered).
  const view = await env.agent.getSession(sessionId);
  expect(view.counters.continuedAsNew).toBe(0);
  expect(view.cut).toEqual(["the window's texts past 16000 characters (cut)"]);
  const shown = view.window.flatMap((t) => t.messages).filter((m) => m.role === 'tool');
  expect(shown).toHaveLength(12);
  for (const m of shown) expect(m.content).toMatch(/^数{16000}… \[cut from 45000 characters: too long to show in one getSession answer; the session's events hold it whole\]$/);
  expect(payloadBytes(view)).toBeLessThan(2 * 1024 * 1024);

  // Its archive, written from this run's window (over what one activity input takes), is cut to fit too.
  await env.agent.end(sessionId, 'archive it');
  const closed = await Promise.race([env.client.workflow.getHandle(workflowIdFor(sessionId)).result(), new Promise((resolve) => setTimeout(() => resolve('still open after 30 s'), 30_000))]);
  expect(closed).toMatchObject({ status: 'archived' });
  // The restored window (12 results of 16,000 characters, 576 KB) is over what one model call's input takes: its
  // parts go ahead of the new run's first call (the turn failed, and every turn after it).
  const again = (await env.agent.ask(options, { text: 'still there?' })).turn;
  expect({ outcome: again.outcome, text: again.text, error: again.error }).toEqual({ outcome: 'completed', text: 'Yes.', error: undefined });
  expect(await heldPartInputs(sessionId)).toBeGreaterThanOrEqual(2);
  const restored = (await env.agent.getSession(sessionId)).window.flatMap((t) => t.messages).filter((m) => m.role === 'tool');
  expect(restored).toHaveLength(12);
  for (const m of restored) expect(m.content).toMatch(/^数{16000}… \[cut from 45000 characters: too long to carry into the session's next run\]$/);
}, 90_000);
