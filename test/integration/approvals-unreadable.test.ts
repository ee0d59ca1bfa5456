import { mintToken, TokenBook } from '../../api/auth';
import { createApi, listen } from '../../api/server';
import { AgentClient, NoWorkerError } from '../../client';
import { probeTools, type ProbeLog } from '../support/probe-tools';
import { eventually, sessionOptions, startTestEnv, uniqueId, type TestEnv } from '../support/test-env';

/*
 * The approvals inbox when the sessions holding calls cannot be read (their
 * worker is gone): an error, never an empty inbox that says nothing waits.
 */

let env: TestEnv;
const log: ProbeLog = { runs: [] };
beforeAll(async () => {
  env = await startTestEnv({ name: 'approvals-down', extraTools: probeTools(log) });
});
afterAll(async () => {
  await env?.close();
});

it('with every session that holds a call unreadable, the inbox is 504 naming the timeout, then 503 NoWorker once the server sees no worker; with the worker back, the held call is listed', async () => {
  const sessionId = uniqueId('held');
  env.model.script(
    [
      { respond: { kind: 'tool_calls', calls: [{ id: 'call_wipe', name: 'local_wipe', arguments: { confirmText: 'all' } }] } },
      { match: { hasToolResults: true }, respond: { kind: 'text', text: 'Wiped.' } },
    ],
    { lane: sessionId },
  );
  const ana = env.agent.as({ tenant: 'acme', user: 'ana' });
  await ana.send(sessionOptions(sessionId, { namespace: { tenant: 'acme', user: 'ana' } }), { text: 'wipe everything' });
  await eventually(async () => (await ana.getSession(sessionId)).pendingConfirmations.length === 1, 'the call to be held');

  const { token, entry } = mintToken({ tenant: 'acme', user: 'ana' });
  // Queries answer within 1 s or time out, so the test does not wait the default 10 s.
  const agent = new AgentClient({ client: env.client, taskQueue: env.taskQueue, callTimeoutMs: 1_000 });
  const api = createApi({ agent, tokens: new TokenBook([entry]) });
  const server = await listen(api.app, 0);
  const inbox = () => fetch(`${server.url}/v1/approvals`, { headers: { authorization: `Bearer ${token}` } });
  try {
    await eventually(async () => ((await (await inbox()).json()) as { approvals: unknown[] }).approvals.length === 1, 'the listing to show the held session');

    await env.worker.shutdown();
    // At first the server lets each query wait for a worker: 504 once the API's deadline passes. Once it has noticed
    // nobody polls (10 to 20 s here), it refuses queries at once: 503 NoWorker. Never a 500, never an empty inbox.
    const answers: string[] = [];
    const deadline = Date.now() + 60_000;
    for (;;) {
      const down = await inbox();
      expect(down.headers.get('content-type')).toMatch(/problem\+json/);
      const body = (await down.json()) as { failureType: string; detail: string; retryAfterSeconds?: number };
      answers.push(`${down.status} ${body.failureType}`);
      expect(answers.at(-1)).toMatch(/^(504 TemporalCallTimeout|503 NoWorker)$/);
      if (down.status === 503) {
        expect(body.detail).toMatch(/no worker is running/);
        expect(body.retryAfterSeconds).toBe(5);
        expect(down.headers.get('retry-after')).toBe('5');
        break;
      }
      expect(Date.now()).toBeLessThan(deadline);
    }
    // The typed client says the same, naming the task queue to start a worker on.
    await expect(agent.as({ tenant: 'acme', user: 'ana' }).getSession(sessionId)).rejects.toThrow(new RegExp(`no worker has polled task queue "${env.taskQueue}" lately`));
    await expect(agent.as({ tenant: 'acme', user: 'ana' }).getSession(sessionId)).rejects.toBeInstanceOf(NoWorkerError);

    await env.startWorker(probeTools(log));
    // Until the server has seen the new worker poll, it may still refuse (503 NoWorker, retried after a moment).
    let back: { approvals?: Array<{ sessionId: string; toolName: string }>; unreadable?: string[]; failureType?: string } = {};
    const refusals: string[] = [];
    await eventually(async () => {
      const res = await inbox();
      back = (await res.json()) as typeof back;
      if (res.status !== 200) refusals.push(`${res.status} ${back.failureType}`);
      return res.status === 200;
    }, 'the inbox to answer with the worker back');
    for (const refusal of refusals) expect(refusal).toMatch(/^(503 NoWorker|504 TemporalCallTimeout)$/);
    expect(back.approvals).toEqual([expect.objectContaining({ sessionId, toolName: 'local_wipe' })]);
    expect(back.unreadable).toBeUndefined();
  } finally {
    await server.close();
    api.hub.close();
  }
}, 120_000);
