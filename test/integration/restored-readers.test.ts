import type { SessionEvent } from '../../client';
import { readEventsQuery, workflowIdFor } from '../../workflows/messages';
import type { StepResponse } from '../../scripted-model';
import { eventually, sessionOptions, startTestEnv, uniqueId, type TestEnv } from '../support/test-env';

/*
 * Readers of a session restored from its archive that has since continued
 * as new: its run keeps only its latest events, so between the archive's
 * last event and the run's first kept one there is a hole.
 */

let env: TestEnv;
beforeAll(async () => {
  env = await startTestEnv({ name: 'restored-readers' });
});
afterAll(async () => {
  await env?.close();
});

it('a reader "from whatever is kept" of a restored session that dropped events since gets the live events, not TruncatedOffsetError', async () => {
  const sessionId = uniqueId('restored-hole');
  // Long answers and the smallest history budget: the restored run continues as new soon, keeping its last 64 KB of events.
  const long = Array.from({ length: 1_000 }, (_, i) => `w${i}`).join(' ');
  env.model.script(Array.from({ length: 60 }, () => ({ respond: (): StepResponse => ({ kind: 'text', text: long }) })), { lane: sessionId });
  const options = sessionOptions(sessionId, { limits: { maxHistoryEvents: 200, windowMaxTurns: 200, windowMaxTokens: 1_000_000 } });
  await env.agent.ask(options, { text: 'before the archive' });
  const firstChain = (await env.agent.getSession(sessionId)).chainId;
  expect(firstChain).toEqual(expect.any(String));
  const handle = env.client.workflow.getHandle(workflowIdFor(sessionId));
  await env.agent.end(sessionId);
  await eventually(async () => (await handle.describe()).status.name === 'COMPLETED', 'the session to archive', 30_000);
  let archiveEnd = 0;
  for await (const e of env.agent.events(sessionId)) archiveEnd = e.offset + 1;
  expect(archiveEnd).toBeGreaterThan(0);

  // Restored by the next message; then enough turns that the restored chain no longer keeps its first events.
  let turns = 0;
  for (; turns < 50; turns++) {
    await env.agent.ask(options, { text: `after the restore ${turns}` });
    const kept = await handle.query(readEventsQuery, { fromOffset: 0, limit: 1 });
    if (kept.earliestOffset > archiveEnd) break;
  }
  expect(turns).toBeLessThan(50);
  // The view names the chain of runs: another since the restore, the same across the continue-as-new since.
  const view = await env.agent.getSession(sessionId);
  expect(view.counters.continuedAsNew).toBeGreaterThan(0);
  expect(view.chainId).not.toBe(firstChain);
  expect(view.chainId).toBe((await handle.describe()).raw.workflowExecutionInfo?.firstRunId);

  const events: SessionEvent[] = [];
  let failure: unknown;
  const abort = new AbortController();
  const reading = (async () => {
    for await (const e of env.agent.events(sessionId, { fromOffset: 0, signal: abort.signal })) events.push(e);
  })().catch((err: unknown) => (failure = err));
  try {
    const { turnId } = await env.agent.send(options, { text: 'one more' });
    await eventually(() => failure !== undefined || events.some((e) => e.event.type === 'turn_completed' && e.event.turnId === turnId), 'the reader to see the new turn');
    expect(failure).toBeUndefined();
    // It started at the run's first kept event (nothing from the archive before the hole), contiguous from there.
    const offsets = events.map((e) => e.offset);
    expect(offsets[0]).toBeGreaterThan(archiveEnd);
    expect(offsets).toEqual(offsets.map((_, i) => offsets[0]! + i));
  } finally {
    abort.abort();
    await reading;
  }
}, 120_000);
