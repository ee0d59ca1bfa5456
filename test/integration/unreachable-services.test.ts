import { spawn } from 'node:child_process';
import { Socket, createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import { Client, Connection } from '@temporalio/client';
import { AgentClient, TemporalCallTimeoutError, TemporalUnreachableError } from '../../client';
import { loadConfig } from '../../workers/config';
import { freePort, pipeToUpstream } from '../support/net';
import { mintToken, TokenBook } from '../../api/auth';
import { createApi, listen } from '../../api/server';
import { sessionOptions, uniqueId } from '../support/test-env';

/** A TCP proxy in front of the shared Temporal server that can be cut, so the stack itself is never stopped. */
class CuttableProxy {
  private constructor(
    private readonly server: Server,
    private readonly sockets: Set<Socket>,
    readonly address: string,
  ) {}

  static async start(target: string): Promise<CuttableProxy> {
    const sockets = new Set<Socket>();
    const server = createServer((client) => pipeToUpstream(client, target, sockets));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return new CuttableProxy(server, sockets, `127.0.0.1:${(server.address() as AddressInfo).port}`);
  }

  /** Stops accepting and drops every open connection: the server "goes down". */
  async cut(): Promise<void> {
    const closed = new Promise((resolve) => this.server.close(resolve));
    for (const s of this.sockets) s.destroy();
    await closed;
  }
}

const config = loadConfig({ ...process.env, OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' });

/** A client of the real server on a task queue no worker polls, with a 1.5 s call timeout, and a session id for it. */
async function clientWithoutWorker(): Promise<{ agent: AgentClient; taskQueue: string; sessionId: string }> {
  const connection = await Connection.connect({ address: config.temporal.address });
  const taskQueue = uniqueId('tq-no-worker');
  const agent = new AgentClient({ client: new Client({ connection, namespace: config.temporal.namespace }), taskQueue, callTimeoutMs: 1_500, principal: { tenant: 'acme', user: 'ana' } });
  return { agent, taskQueue, sessionId: uniqueId('no-worker') };
}

describe('client calls while the Temporal server is unreachable', () => {
  it('connecting to an address nothing listens on fails within the connect timeout, naming the address', async () => {
    const address = `127.0.0.1:${await freePort()}`;
    const started = Date.now();
    const attempt = AgentClient.connect({ address, taskQueue: 'tq', connectTimeoutMs: 1_000 });
    await expect(attempt).rejects.toBeInstanceOf(TemporalUnreachableError);
    await expect(attempt).rejects.toThrow(new RegExp(`Temporal server at ${address} is unreachable.*TEMPORAL_ADDRESS`));
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('every kind of call gives up within about one call timeout once the server goes away, naming the address', async () => {
    const proxy = await CuttableProxy.start(config.temporal.address);
    const agent = await AgentClient.connect({
      address: proxy.address,
      namespace: config.temporal.namespace,
      taskQueue: uniqueId('tq-down'),
      callTimeoutMs: 1_500,
      principal: { tenant: 'acme', user: 'ana' },
    });
    // Reachable first: an unknown session is simply not found.
    await expect(agent.getSession(uniqueId('nobody'))).rejects.toThrow(/does not exist/);
    await proxy.cut();
    const sessionId = uniqueId('down');
    const calls: Array<[string, () => Promise<unknown>]> = [
      ['getSession', () => agent.getSession(sessionId)],
      ['interrupt', () => agent.interrupt(sessionId)],
      ['send', () => agent.send(sessionOptions(sessionId), { text: 'hi' })],
      ['ask', () => agent.ask(sessionOptions(sessionId), { text: 'hi' })],
      ['events', async () => {
        for await (const _ of agent.events(sessionId)) return;
      }],
    ];
    for (const [name, run] of calls) {
      const started = Date.now();
      const error = await run().then(
        () => undefined,
        (err: unknown) => err,
      );
      const elapsed = Date.now() - started;
      expect({ name, type: (error as Error | undefined)?.name }).toEqual({ name, type: 'TemporalUnreachableError' });
      expect((error as TemporalUnreachableError).address).toBe(proxy.address);
      expect((error as Error).message).toContain(`Temporal server at ${proxy.address} is unreachable`);
      expect({ name, fast: elapsed < 8_000 }).toEqual({ name, fast: true });
    }
    // The connection stays open: the SDK's gRPC retry timers of the abandoned calls would
    // throw "Channel has been shut down" into the process if it were closed under them.
  });

  it('a call the server accepts but no worker answers times out naming the task queue, not the server', async () => {
    const { agent, taskQueue, sessionId } = await clientWithoutWorker();
    try {
      const started = Date.now();
      const attempt = agent.send(sessionOptions(sessionId), { text: 'hello?' });
      await expect(attempt).rejects.toBeInstanceOf(TemporalCallTimeoutError);
      await expect(attempt).rejects.toThrow(new RegExp(`within 1500 ms, although the Temporal server at ${config.temporal.address} answers.*task queue "${taskQueue}"`));
      expect(Date.now() - started).toBeLessThan(8_000);
    } finally {
      await agent.client.workflow.getHandle(`session-${sessionId}`).terminate('test cleanup').catch(() => undefined);
      // Left open, as above: a call of this test that got a retryable status has its next try on the
      // SDK's retry timer, which throws "Channel has been shut down" into the process if the
      // connection is closed first (seen once in CI).
    }
  });
});

describe('long waits with no worker polling', () => {
  it('ask() on a task queue no worker polls gives up naming the task queue, where it waited for ever', async () => {
    const { agent, taskQueue, sessionId } = await clientWithoutWorker();
    try {
      const started = Date.now();
      // A turn may take minutes, so ask() has no deadline of its own: it waits while the server answers. Before, that was for ever.
      const attempt = agent.ask(sessionOptions(sessionId), { text: 'hello?' });
      await expect(attempt).rejects.toBeInstanceOf(TemporalCallTimeoutError);
      await expect(attempt).rejects.toThrow(new RegExp(`task queue "${taskQueue}"`));
      expect(Date.now() - started).toBeLessThan(15_000);
    } finally {
      await agent.client.workflow.getHandle(`session-${sessionId}`).terminate('test cleanup').catch(() => undefined);
    }
  }, 30_000);
});

describe('the HTTP API while Temporal is out of reach', () => {
  it('answers 504 and then 503 with what to do, keeping the server address and task queue for its own log', async () => {
    const proxy = await CuttableProxy.start(config.temporal.address);
    const taskQueue = uniqueId('tq-api-down');
    const agent = await AgentClient.connect({ address: proxy.address, namespace: config.temporal.namespace, taskQueue, callTimeoutMs: 1_500 });
    const { token, entry } = mintToken({ tenant: 'acme', user: 'ana' });
    const logged: string[] = [];
    const server = await listen(createApi({ agent, tokens: new TokenBook([entry]), log: (line) => logged.push(line) }).app, 0);
    const sessionId = uniqueId('api-down');
    const post = () =>
      fetch(`${server.url}/v1/sessions/${sessionId}/messages`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ text: 'hello?' }) });
    try {
      // No worker polls the task queue: the call times out.
      const late = await post();
      expect(late.status).toBe(504);
      const lateText = await late.text();
      expect(JSON.parse(lateText)).toMatchObject({ failureType: 'TemporalCallTimeout', detail: expect.stringMatching(/no worker took it in time/) });
      await proxy.cut();
      const down = await post();
      expect(down.status).toBe(503);
      const downText = await down.text();
      expect(JSON.parse(downText)).toMatchObject({ failureType: 'TemporalUnreachable', detail: expect.stringMatching(/retry shortly/) });
      for (const body of [lateText, downText]) {
        expect(body).not.toContain(proxy.address);
        expect(body).not.toContain(taskQueue);
      }
      // The operator's log has both.
      expect(logged.join('\n')).toContain(taskQueue);
      expect(logged.join('\n')).toContain(proxy.address);
    } finally {
      await server.close();
    }
  }, 60_000);
});

/** Runs the worker entry point and returns its exit code and stderr. */
function runWorker(env: Record<string, string>): Promise<{ code: number | null; stderr: string; ms: number }> {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'workers/main.ts'], {
      cwd: `${__dirname}/../..`,
      env: { ...process.env, OPENAI_BASE_URL: 'http://127.0.0.1:9/v1', MAINTENANCE_EVERY_MS: '0', ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('exit', (code) => resolve({ code, stderr, ms: Date.now() - started }));
  });
}

describe('a worker that cannot reach its services at start', () => {
  it('prints one line naming the unreachable MongoDB (without its password) and exits non-zero', async () => {
    const port = await freePort();
    const result = await runWorker({ MONGODB_URI: `mongodb://agent:hunter2-secret@127.0.0.1:${port}/?authSource=admin`, MONGODB_SERVER_SELECTION_TIMEOUT_MS: '1000' });
    expect(result.code).toBe(69);
    const lines = result.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`^durable-agent worker cannot start: MongoDB at mongodb://127\\.0\\.0\\.1:${port} is unreachable \\(.+\\)\\. Check that the server runs`));
    expect(result.stderr).not.toContain('hunter2-secret');
  }, 30_000);

  it('prints one line naming the unreachable Temporal server and exits non-zero', async () => {
    const address = `127.0.0.1:${await freePort()}`;
    const result = await runWorker({ TEMPORAL_ADDRESS: address, TEMPORAL_CONNECT_TIMEOUT_MS: '1500', MONGODB_DATABASE: uniqueId('t_unreach').replace(/-/g, '_') });
    expect(result.code).toBe(69);
    const lines = result.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`^durable-agent worker cannot start: Temporal server at ${address} is unreachable \\(.+\\)\\. Check that the server runs`));
  }, 30_000);
});
