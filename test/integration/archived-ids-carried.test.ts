import { WithStartWorkflowOperation } from '@temporalio/client';
import { workflowIdFor } from '../../workflows/messages';
import { probeTools, type ProbeLog } from '../support/probe-tools';
import { eventually, sessionOptions, startTestEnv, uniqueId, type TestEnv } from '../support/test-env';

/*
 * A message the session took before it archived, retried by a client whose
 * answer was lost (under another update id, as another SDK or the CLI would
 * send it): the restored run answers it as the turn it was. Here the
 * restored run has continued as new before the retry comes: the ids it read
 * from the archive must go with it, or the retry is a new turn and its tool
 * writes again.
 */

const log: ProbeLog = { runs: [] };
let env: TestEnv;

beforeAll(async () => {
  env = await startTestEnv({ name: 'archived-ids', extraTools: probeTools(log) });
});
afterAll(async () => {
  await env?.close();
});

it('a retry of a message from before the archive, after the restored run continued as new, is the turn it was: its tool runs once', async () => {
  const sessionId = uniqueId('arch-ids');
  const workflowId = workflowIdFor(sessionId);
  // The first run closes a second after its turn; the restored one continues as new after a few turns (200 events).
  const options = sessionOptions(sessionId, { limits: { idleTimeoutMs: 1_000, maxHistoryEvents: 200 } });
  env.model.script(
    [
      { respond: { kind: 'tool_calls', calls: [{ id: 'call_note', name: 'local_note', arguments: { text: 'book the room' } }] } },
      { match: { hasToolResults: true }, respond: { kind: 'text', text: 'Booked.' } },
      ...Array.from({ length: 30 }, () => ({ respond: { kind: 'text' as const, text: 'Fine.' } })),
    ],
    { lane: sessionId },
  );
  const first = await env.agent.ask(options, { text: 'book it', clientMessageId: 'book-1' });
  expect(first.turn.text).toBe('Booked.');
  await env.client.workflow.getHandle(workflowId).result();
  const notes = () => log.runs.filter((r) => r.key.startsWith(`${sessionId}:`) && r.tool === 'note').length;
  expect(notes()).toBe(1);

  // Restored by the next message, then a few turns until the run continues as new.
  const restoredRun = (await env.client.workflow.getHandle(workflowId).describe()).runId;
  await env.agent.ask({ ...options, limits: { ...options.limits, idleTimeoutMs: 60_000 } }, { text: 'one' });
  const restored = (await env.client.workflow.getHandle(workflowId).describe()).runId;
  expect(restored).not.toBe(restoredRun);
  for (let i = 0; i < 25; i++) {
    await env.agent.ask(options, { text: `more ${i}` });
    if ((await env.client.workflow.getHandle(workflowId).describe()).runId !== restored) break;
  }
  const continued = await eventually(async () => {
    const d = await env.client.workflow.getHandle(workflowId).describe();
    return d.runId !== restored && d.status.name === 'RUNNING' ? d.runId : null;
  }, 'the restored run to continue as new');

  // The retry, under another update id: the turn it was, and nothing ran again.
  const start = new WithStartWorkflowOperation('agentSession', { workflowId, taskQueue: env.taskQueue, args: [{ options }], workflowIdConflictPolicy: 'USE_EXISTING' });
  const again = (await env.client.workflow.executeUpdateWithStart('sendMessage', {
    args: [{ text: 'book it', clientMessageId: 'book-1', principal: { tenant: 'acme', user: 'ana' } }],
    updateId: `retry-${sessionId}`,
    startWorkflowOperation: start,
  })) as { turnId: string };
  expect(again.turnId).toBe(first.turnId);
  expect((await env.client.workflow.getHandle(workflowId).describe()).runId).toBe(continued);
  expect(notes()).toBe(1);
  await env.agent.end(sessionId);
}, 120_000);
