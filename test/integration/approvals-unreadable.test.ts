import { mintToken, TokenBook } from '../../api/auth';
import { createApi, listen } from '../../api/server';
import { AgentClient } from '../../client';
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

it('with every session that holds a call unreadable, the inbox is 504 naming the timeout; with the worker back, the held call is listed', async () => {
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
    const down = await inbox();
    expect(down.status).toBe(504);
    expect(down.headers.get('content-type')).toMatch(/problem\+json/);
    expect(await down.json()).toMatchObject({ failureType: 'TemporalCallTimeout' });

    await env.startWorker(probeTools(log));
    const back = (await (await inbox()).json()) as { approvals: Array<{ sessionId: string; toolName: string }>; unreadable?: string[] };
    expect(back.approvals).toEqual([expect.objectContaining({ sessionId, toolName: 'local_wipe' })]);
    expect(back.unreadable).toBeUndefined();
  } finally {
    await server.close();
    api.hub.close();
  }
}, 60_000);
