import { sessionOptions, startTestEnv, uniqueId, type TestEnv } from '../support/test-env';
import { sendMessageUpdate, workflowIdFor } from '../../workflows/messages';
import { MESSAGE_ARRIVING_BEFORE_CLOSE, type agentSession } from '../../workflows/agent-session';
import { PATCH_BASELINE, baselinePatchIds } from '../../workflows/patches';
import { TURN_READS_IN_ONE } from '../../workflows/session-turn';

/*
 * An end request and a message that reach the session in the same
 * activation (the fuzzer met it: endSession, then a message, while the
 * worker was busy). The message's handler first waits for the archive to be
 * read, so the loop saw the end request with the queue still empty, closed
 * the run, and the accepted message waited for a turn that never came: the
 * session hung in "closing" for ever. The message now runs first.
 */

let env: TestEnv;
beforeAll(async () => {
  env = await startTestEnv({ name: 'end-with-message' });
});
afterAll(async () => {
  await env?.close();
});

it('runs a message that arrives with an end request, then archives the session', async () => {
  const sessionId = uniqueId('s');
  const options = sessionOptions(sessionId);
  env.model.script(
    [
      { respond: { kind: 'text', text: 'first answer' } },
      { respond: { kind: 'text', text: 'last answer' } },
    ],
    { lane: sessionId },
  );
  const { turnId } = await env.agent.send(options, { text: 'hello' });
  expect(await env.agent.waitForTurn(sessionId, turnId)).toMatchObject({ outcome: 'completed' });

  // With no worker, both wait on the server and reach the next worker in one workflow task.
  await env.worker.shutdown();
  await env.agent.end(sessionId, 'user left');
  const sending = env.agent.send(options, { text: 'one more thing' });
  await new Promise((r) => setTimeout(r, 1_000));
  env.worker = await env.startWorker();

  const sent = await sending;
  expect(await env.agent.waitForTurn(sessionId, sent.turnId)).toMatchObject({ outcome: 'completed', text: 'last answer' });
  const handle = env.client.workflow.getHandle<typeof agentSession>(workflowIdFor(sessionId));
  expect(await handle.result()).toMatchObject({ status: 'archived', turns: 2 });

  // The end request and the message were delivered in one workflow task (its completion is written before
  // the update's acceptance), and the patched path ran: a new run takes it under the patch baseline, whose one
  // marker stands for it (workflows/patches.ts).
  const events = (await handle.fetchHistory()).events ?? [];
  const signalled = events.findIndex((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'endSession');
  const accepted = events.findIndex((e, i) => i > signalled && e.workflowExecutionUpdateAcceptedEventAttributes);
  const tasksBetween = events.slice(signalled, accepted).filter((e) => e.workflowTaskCompletedEventAttributes).length;
  expect(tasksBetween).toBe(1);
  const patches = events
    .filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_patch')
    .map((e) => {
      const data = e.markerRecordedEventAttributes?.details?.['patch-data']?.payloads?.[0]?.data;
      return data ? (JSON.parse(Buffer.from(data).toString('utf8')) as { id: string }).id : undefined;
    });
  // The baseline's one marker, and that of the one patch added after it that every turn consults.
  expect(patches).toEqual([PATCH_BASELINE, TURN_READS_IN_ONE]);
  expect(baselinePatchIds()).toContain(MESSAGE_ARRIVING_BEFORE_CLOSE);
  env.model.assertDone(sessionId);
}, 60_000);

it('refuses a message sent again for a turn whose result the session no longer keeps, and still closes', async () => {
  const sessionId = uniqueId('s');
  // A window that holds every turn: no summary folds (the scripted model answers only turns).
  const options = sessionOptions(sessionId, { limits: { windowMaxTurns: 200 } });
  const turns = 52;
  env.model.script(Array.from({ length: turns }, (_, i) => ({ respond: { kind: 'text' as const, text: `answer ${i + 1}` } })), { lane: sessionId });
  const first = await env.agent.ask(options, { text: 'message 1', clientMessageId: 'm-1' });
  expect(first.turn).toMatchObject({ outcome: 'completed', text: 'answer 1' });
  // The message sent again as another update (another client, or a retry with a new update id), as the fuzzer did.
  const handle = env.client.workflow.getHandle<typeof agentSession>(workflowIdFor(sessionId));
  const again = () =>
    handle.executeUpdate(sendMessageUpdate, { args: [{ text: 'message 1', clientMessageId: 'm-1', waitForTurn: true, principal: { tenant: 'acme', user: 'ana' } }] });
  // While its result is kept: the same turn, answered again.
  await expect(again()).resolves.toMatchObject({ turnId: first.turnId, turn: { text: 'answer 1' } });
  // The session keeps the last 50 results: after 51 more turns, the first one's is gone.
  for (let i = 2; i <= turns; i++) await env.agent.ask(options, { text: `message ${i}` });
  await expect(again()).rejects.toMatchObject({ cause: { message: expect.stringMatching(new RegExp(`m-1 was handled as ${first.turnId}.*no longer keeps`)) } });
  // No handler is left waiting: the session closes when asked.
  await env.agent.end(sessionId, 'done');
  expect(await env.client.workflow.getHandle<typeof agentSession>(workflowIdFor(sessionId)).result()).toMatchObject({ status: 'archived' });
  env.model.assertDone(sessionId);
}, 90_000);

it('an end request during the turn that continues the session as new ends the next run', async () => {
  // A short history budget: the session continues as new after a few turns.
  const limits = { maxHistoryEvents: 200 };
  const runOf = async (sessionId: string) => (await env.client.workflow.getHandle(workflowIdFor(sessionId)).describe()).runId;
  // A first session says how many turns a run holds (every turn here is alike).
  const probe = uniqueId('s');
  env.model.script(Array.from({ length: 30 }, (_, i) => ({ respond: { kind: 'text' as const, text: `probe ${i + 1}` } })), { lane: probe });
  await env.agent.ask(sessionOptions(probe, { limits }), { text: 'probe 1' });
  const firstRun = await runOf(probe);
  let perRun = 1;
  while ((await runOf(probe)) === firstRun) {
    perRun += 1;
    expect(perRun).toBeLessThan(30);
    await env.agent.ask(sessionOptions(probe, { limits }), { text: `probe ${perRun}` });
  }
  await env.agent.end(probe, 'probe done');

  const sessionId = uniqueId('s');
  const options = sessionOptions(sessionId, { limits });
  env.model.script(
    [
      ...Array.from({ length: perRun - 1 }, (_, i) => ({ respond: { kind: 'text' as const, text: `answer ${i + 1}` } })),
      // The turn after which the run continues as new streams slowly: the end request lands while it runs.
      { respond: { kind: 'text' as const, text: 'slow last answer', chunkSize: 4, delayMs: 300 } },
    ],
    { lane: sessionId },
  );
  for (let i = 1; i < perRun; i++) await env.agent.ask(options, { text: `message ${i}` });
  const first = await runOf(sessionId);
  const last = env.agent.ask(options, { text: `message ${perRun}` });
  await new Promise((r) => setTimeout(r, 600));
  await env.agent.end(sessionId, 'user left');
  await last.catch(() => undefined);
  // The run continued as new, and the next one ended at once instead of waiting for its idle timeout.
  const handle = env.client.workflow.getHandle<typeof agentSession>(workflowIdFor(sessionId));
  const result = await Promise.race([handle.result(), new Promise((r) => setTimeout(() => r('still running'), 15_000))]);
  expect(result).toMatchObject({ status: 'archived', turns: perRun });
  expect(await runOf(sessionId)).not.toBe(first);
  env.model.assertDone(sessionId);
}, 90_000);
