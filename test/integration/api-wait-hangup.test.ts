import { Client, Connection } from '@temporalio/client';
import { mintToken, TokenBook } from '../../api/auth';
import { createApi, listen } from '../../api/server';
import { AgentClient } from '../../client/agent-client';
import { sessionConnectionInterceptors } from '../../client';
import { probeTools, type ProbeLog } from '../support/probe-tools';
import { eventually, startTestEnv, uniqueId, type TestEnv } from '../support/test-env';

/*
 * A caller of POST /messages with waitForTurn who hangs up while the turn
 * waits (here for a person's approval, which may take days). The API's agent
 * client has a connection of its own whose calls are counted: the update
 * calls that wait for turns, and the getTurn queries a wait falls back to
 * when the session holds as many waits as it allows.
 */

let env: TestEnv;
let base: string;
let closeApi: () => Promise<void>;
let closeHub: () => void;
let connection: Connection;
const { token, entry } = mintToken({ tenant: 'acme', user: 'ana' });
let waitingCalls = 0;
let turnQueries = 0;

beforeAll(async () => {
  env = await startTestEnv({ name: 'api-hangup', extraTools: probeTools({ runs: [] } as ProbeLog) });
  const address = env.client.connection instanceof Connection ? env.client.connection.options.address : '';
  connection = await Connection.connect({ address, interceptors: sessionConnectionInterceptors() });
  const service = connection.workflowService as unknown as Record<string, (req: unknown) => Promise<unknown>>;
  for (const name of ['updateWorkflowExecution', 'pollWorkflowExecutionUpdate', 'executeMultiOperation']) {
    const real = service[name]!.bind(service);
    service[name] = (req: unknown) => {
      waitingCalls += 1;
      return real(req).finally(() => (waitingCalls -= 1));
    };
  }
  const query = service.queryWorkflow!.bind(service);
  service.queryWorkflow = (req: unknown) => {
    if ((req as { query?: { queryType?: string } }).query?.queryType === 'getTurn') turnQueries += 1;
    return query(req);
  };
  const client = new Client({ connection, namespace: env.client.options.namespace, dataConverter: env.client.options.dataConverter });
  const api = createApi({ agent: new AgentClient({ client, taskQueue: env.taskQueue }), tokens: new TokenBook([entry]), limits: { requestsPerMinute: 100_000 } });
  closeHub = () => api.hub.close();
  const server = await listen(api.app, 0);
  base = server.url;
  closeApi = server.close;
});

afterAll(async () => {
  await closeApi?.();
  closeHub?.();
  await connection?.close();
  await env?.close();
});

it('a caller waiting for its turn who hangs up leaves nothing waiting or polling on the server; the messages still run', async () => {
  const sessionId = uniqueId('hangup');
  env.model.script(
    [
      { respond: { kind: 'tool_calls', calls: [{ id: 'call_wipe', name: 'local_wipe', arguments: { confirmText: 'all' } }] } },
      { match: { hasToolResults: true }, respond: { kind: 'text', text: 'Wiped.' } },
      { respond: { kind: 'text', text: 'Two.' } },
      { respond: { kind: 'text', text: 'Three.' } },
      { respond: { kind: 'text', text: 'Four.' } },
    ],
    { lane: sessionId },
  );
  const callers = [0, 1, 2, 3].map(() => new AbortController());
  const post = (i: number) =>
    fetch(`${base}/v1/sessions/${sessionId}/messages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      // Queued behind the held turn, not interrupting it.
      body: JSON.stringify({ text: `message ${i}`, waitForTurn: true, options: { busyPolicy: 'queue' } }),
      signal: callers[i]!.signal,
    }).catch(() => undefined);
  const answers = [post(0)];
  await eventually(async () => ((await env.agent.getSession(sessionId).catch(() => undefined))?.pendingConfirmations.length ?? 0) > 0, 'the held call');
  answers.push(post(1), post(2), post(3));
  // Every caller waits on the server: three by waits the session holds, the fourth by query (the session allows
  // three; two waits checked in one workflow task may both pass, and then all four hold waits).
  await eventually(() => waitingCalls >= 4 || (waitingCalls >= 3 && turnQueries > 0), 'four callers waiting');
  // And the three messages taken (a call still on its way when its caller hangs up may never reach the session).
  await eventually(async () => (await env.agent.getSession(sessionId)).queuedMessages === 3, 'the three messages queued');

  for (const c of callers) c.abort();
  await Promise.all(answers);
  await eventually(() => waitingCalls === 0, 'the waits to stop', 5_000);
  const queried = turnQueries;
  await new Promise((r) => setTimeout(r, 2_500));
  expect(turnQueries).toBe(queried);

  // Hanging up withdrew nothing: the four messages were taken, and run once the call is decided.
  await env.agent.approve(sessionId, 'call_wipe');
  await eventually(async () => (await env.agent.getSession(sessionId)).counters.turns === 4, 'the four turns');
  await env.agent.end(sessionId);
}, 90_000);
