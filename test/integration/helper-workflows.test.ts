import { Client, type WorkflowClientInterceptor } from '@temporalio/client';
import { AgentClient } from '../../client';
import { workflowIdFor } from '../../workflows/messages';
import { sessionOptions, startTestEnv, uniqueId, type TestEnv } from '../support/test-env';

/*
 * Reads the client runs as helper workflows (an archive page, usage,
 * memories, prompts) are bounded in time on the server, and a caller's
 * abort signal stops the client's wait for one.
 */

let env: TestEnv;
beforeAll(async () => {
  env = await startTestEnv({ name: 'helpers' });
});
afterAll(async () => {
  await env?.close();
});

/** A client on a task queue no worker polls, recording the helper workflows it starts. */
function clientWithoutWorkers(started: Array<{ workflowId: string }>): AgentClient {
  const recorder: WorkflowClientInterceptor = {
    async start(input, next) {
      started.push({ workflowId: input.options.workflowId });
      return next(input);
    },
  };
  const client = new Client({ connection: env.client.connection, namespace: env.config.temporal.namespace, dataConverter: env.client.options.dataConverter, interceptors: { workflow: [recorder] } });
  return new AgentClient({ client, taskQueue: uniqueId('nobody-polls'), principal: { tenant: 'acme', user: 'ana' } });
}

it('reading an archived session with no worker: the caller\'s signal ends the read at once, and the helper workflow expires on the server', async () => {
  const sessionId = uniqueId('archived');
  env.model.script([{ respond: { kind: 'text', text: 'kept' } }], { lane: sessionId });
  await env.agent.ask(sessionOptions(sessionId), { text: 'hi' });
  await env.agent.end(sessionId);
  await env.client.workflow.getHandle(workflowIdFor(sessionId)).result();

  const started: Array<{ workflowId: string }> = [];
  const reader = clientWithoutWorkers(started);
  const abort = new AbortController();
  const events: unknown[] = [];
  const reading = (async () => {
    for await (const e of reader.events(sessionId, { signal: abort.signal })) events.push(e);
  })();
  // The archive page is a helper workflow on a queue nobody polls: it waits.
  const until = Date.now() + 10_000;
  while (started.length === 0 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 50));
  expect(started).toHaveLength(1);
  const abortedAt = Date.now();
  abort.abort();
  // Before, the read waited until no worker had polled for 150 s, whatever the signal said.
  await reading;
  expect(Date.now() - abortedAt).toBeLessThan(2_000);
  expect(events).toEqual([]);
  const helper = await env.client.workflow.getHandle(started[0]!.workflowId).describe();
  expect(helper.raw.executionConfig?.workflowExecutionTimeout?.seconds?.toString()).toBe('1800');
  await env.client.workflow.getHandle(started[0]!.workflowId).terminate('test over');
}, 60_000);
