import { z } from 'zod';
import { defineTool } from '../../activities/tools/native-tool';
import { workflowIdFor } from '../../workflows/messages';
import { payloadBytes } from '../../workflows/payload-budget';
import { sessionOptions, startTestEnv, uniqueId, type TestEnv } from '../support/test-env';

/*
 * A session whose turns hold more text than one Temporal payload takes (2 MB):
 * the write of its archive, and the state it carries to its next run, must
 * still fit, or the command fails every workflow task and the session never
 * closes.
 */

const bigRead = defineTool({
  name: 'big_read',
  description: 'Reads one large file.',
  parameters: z.object({ n: z.number().int().min(1).max(200_000) }),
  risk: 'read',
  execute: async ({ n }) => '数'.repeat(n),
});

let env: TestEnv;
beforeAll(async () => {
  env = await startTestEnv({ name: 'big-turns', extraTools: [bigRead], configEnv: { MAX_TOOL_RESULT_CHARS: '200000' } });
});
afterAll(async () => {
  await env?.close();
});

it('a turn of 2.4 MB of tool results still archives, its longest texts cut and marked, and the session restores and answers', async () => {
  const sessionId = uniqueId('big');
  const reads = [0, 1, 2, 3].map((i) => ({ id: `read_${i}`, name: 'local_big_read', arguments: { n: 200_000 } }));
  env.model.script(
    [
      { respond: { kind: 'tool_calls', calls: reads } },
      { match: { lastUserMessage: 'still there?' }, respond: { kind: 'text', text: 'Yes.' } },
    ],
    { lane: sessionId },
  );
  const options = sessionOptions(sessionId, { limits: { windowMaxTokens: 1_000_000 } });
  const first = (await env.agent.ask(options, { text: 'read the four files' })).turn;
  // Not vacuous: the turn ran the four reads, and their results in the window are over what one payload takes
  // (4 x 200,000 characters of 3 bytes).
  expect(first.toolCalls).toBe(4);
  // The next model call's prompt would hold the four results whole: over what one call may send, so the turn ends there.
  expect({ outcome: first.outcome, error: first.error }).toEqual({ outcome: 'failed', error: expect.stringMatching(/^ModelRequestInvalid: The prompt for step 2 is \d+ bytes, over the 524288-byte limit/) });
  expect(payloadBytes('数'.repeat(4 * 200_000))).toBeGreaterThan(2 * 1024 * 1024);
  // The session can still be looked at: its view is cut to fit one query answer (the server refuses one over 2 MB),
  // saying what it left out, where it was refused before.
  const view = await env.agent.getSession(sessionId);
  expect(view.cut).toEqual(["the window's texts past 16000 characters (cut)"]);
  const shown = view.window.flatMap((t) => t.messages).filter((m) => m.role === 'tool');
  expect(shown).toHaveLength(4);
  for (const m of shown) expect(m.content).toMatch(/^数{16000}… \[cut from 200000 characters: too long to show in one getSession answer; the session's events hold it whole\]$/);
  expect(payloadBytes(view)).toBeLessThan(2 * 1024 * 1024);

  await env.agent.end(sessionId, 'archive it');
  const handle = env.client.workflow.getHandle(workflowIdFor(sessionId));
  const closed = await Promise.race([handle.result(), new Promise((resolve) => setTimeout(() => resolve('still open after 30 s'), 30_000))]);
  expect(closed).toMatchObject({ status: 'archived' });

  const again = (await env.agent.ask(options, { text: 'still there?' })).turn;
  expect({ outcome: again.outcome, text: again.text, error: again.error }).toEqual({ outcome: 'completed', text: 'Yes.', error: undefined });
  const restored = (await env.agent.getSession(sessionId)).window.flatMap((t) => t.messages).filter((m) => m.role === 'tool');
  expect(restored).toHaveLength(4);
  for (const m of restored) expect(m.content).toMatch(/^数{16000}… \[cut from 200000 characters: too long to carry into the session's next run\]$/);
}, 90_000);

it('with memory on, a fold and a memory extraction of such a turn get it cut to fit one input, and the session closes archived', async () => {
  const sessionId = uniqueId('big-mem');
  const reads = [0, 1, 2, 3].map((i) => ({ id: `read_${i}`, name: 'local_big_read', arguments: { n: 200_000 } }));
  env.model.script([{ respond: { kind: 'tool_calls', calls: reads } }], { lane: sessionId });
  // One turn in the window: the big turn is evicted, and folded, when the next one ends.
  const options = sessionOptions(sessionId, { memory: { enabled: true }, limits: { windowMaxTokens: 1_000_000, windowMaxTurns: 1, foldBatchTurns: 1 } });
  expect((await env.agent.ask(options, { text: 'read the four files' })).turn.toolCalls).toBe(4);
  // Its prompt still holds the big turn (over what one call may send): it fails, and the big turn is evicted after it.
  expect((await env.agent.ask(options, { text: 'next one' })).turn.error).toMatch(/^ModelRequestInvalid/);
  await env.agent.end(sessionId, 'archive it');
  const handle = env.client.workflow.getHandle(workflowIdFor(sessionId));
  // Before, the fold's input (or the extraction's at the close) was over 2 MB: the server failed the run, no archive written.
  const closed = await Promise.race([handle.result(), new Promise((resolve) => setTimeout(() => resolve('still open after 30 s'), 30_000))]);
  expect(closed).toMatchObject({ status: 'archived' });
  const sent = env.model.requests.map((r) => JSON.stringify(r.body));
  expect(sent.filter((body) => body.includes("characters: too long to send in one activity input]")).length).toBeGreaterThanOrEqual(1);
}, 90_000);
