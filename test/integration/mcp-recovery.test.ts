import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseMcpConfig, type McpServerConfig } from '../../activities/mcp/mcp-config';
import { McpConnection, type McpConnectionOptions } from '../../activities/mcp/mcp-connection';
import { McpUnavailableError } from '../../activities/mcp/mcp-failure-kinds';
import { eventually } from '../support/test-env';
import { HttpReportServer, PROJECT_ROOT, freePort, readServerEvents, recordingLogger, tempDir, writeMcpConfig } from '../support/mcp-servers';

/**
 * Connection recovery and lifecycle over real server processes: the example
 * report server over HTTP (restarted in place on its port), the public
 * memory server from node_modules, and small stand-ins for a server that
 * never answers initialize and one still installing.
 */

const dir = tempDir('mcp-recovery');
const MEMORY_SERVER = require.resolve('@modelcontextprotocol/server-memory/dist/index.js', { paths: [PROJECT_ROOT] });

function serverConfig(name: string, entry: Record<string, unknown>): McpServerConfig {
  return parseMcpConfig({ mcpServers: { [name]: entry } }, { env: {} }).servers[0]!;
}

const connections: McpConnection[] = [];
function connection(server: McpServerConfig, options: Partial<McpConnectionOptions> = {}): McpConnection {
  const c = new McpConnection(server, { connectTimeoutMs: 5_000, refreshIntervalMs: 600_000, logger: recordingLogger(), ...options });
  connections.push(c);
  return c;
}
afterAll(async () => {
  await Promise.all(connections.map((c) => c.close()));
});

const call = (c: McpConnection, name = 'noop', timeoutMs = 8_000) => c.callTool(name, {}, { signal: new AbortController().signal, timeoutMs });
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('recovery after an outage', () => {
  const eventsPath = join(dir, 'http-events.jsonl');
  let server: HttpReportServer;
  let reports: McpConnection;
  const inits = () => readServerEvents(eventsPath).filter((e) => e.event === 'initialize').length;

  beforeAll(async () => {
    server = new HttpReportServer({ port: await freePort(), eventsPath });
    const url = await server.start();
    // A long first backoff step, as after a long outage: the next scheduled attempt is far away.
    reports = connection(serverConfig('reports', { type: 'http', url }), { reconnect: { initialDelayMs: 20_000, maxDelayMs: 30_000 } });
    expect(await reports.start()).toBe(true);
  });
  afterAll(async () => {
    await server?.kill();
  });

  async function outage(): Promise<void> {
    await server.kill();
    // Without a call, HTTP notices through its notification stream (then a ping); a call notices at once.
    await call(reports).catch(() => undefined);
    await eventually(() => reports.status === 'reconnecting', 'the connection to mark the server down');
  }

  it('a call to a server that is down answers "unavailable" at once, with the error of an attempt made for it', async () => {
    await outage();
    await new Promise((r) => setTimeout(r, 300));
    const started = Date.now();
    const err = await call(reports).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(McpUnavailableError);
    expect((err as Error).message).toMatch(/MCP server "reports" is unavailable: .*(ECONNREFUSED|fetch failed).*reconnecting in the background/);
    // It did not wait out its budget (half of 8 s) for a backoff timer 20 s away.
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('the first call after the server is back succeeds, without waiting for the backoff timer', async () => {
    expect(reports.status).toBe('reconnecting');
    await server.start();
    const started = Date.now();
    const result = await call(reports);
    expect(result.content).toEqual([{ type: 'text', text: 'ok' }]);
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(reports.status).toBe('ready');
  });

  it('concurrent calls to a server marked down share one reconnect attempt', async () => {
    await outage();
    await server.start();
    const before = inits();
    const results = await Promise.all(Array.from({ length: 6 }, () => call(reports)));
    expect(results.every((r) => (r.content[0] as { text: string }).text === 'ok')).toBe(true);
    await eventually(() => inits() > before, 'the server to record the initialize');
    expect(inits()).toBe(before + 1);
  }, 30_000);
});

describe('first connect', () => {
  it('a server still installing is logged as "still starting (first connect)" and kept, not killed and respawned', async () => {
    const logger = recordingLogger();
    // Stands in for `npx -y <server>` on a cold cache: nothing answers for 3 s, then the real server runs.
    const slow = serverConfig('installing', {
      command: process.execPath,
      args: ['-e', `setTimeout(() => import(${JSON.stringify(MEMORY_SERVER)}), 3000)`],
      env: { MEMORY_FILE_PATH: join(dir, 'memory-installing.json') },
    });
    const c = connection(slow, { connectTimeoutMs: 1_000, firstConnectTimeoutMs: 20_000, logger });
    const started = Date.now();
    expect(await c.start()).toBe(false);
    expect(Date.now() - started).toBeLessThan(2_500);
    expect(logger.lines.some((l) => /server "installing": still starting \(first connect\): no answer to initialize after 1000 ms; waiting up to 20000 ms/.test(l))).toBe(true);
    const early = await call(c, 'read_graph', 1_000).catch((e: unknown) => e);
    expect((early as Error).message).toMatch(/MCP server "installing" is unavailable: still starting \(first connect\)/);

    await eventually(() => c.status === 'ready', 'the first connect to finish', 15_000);
    const pid = c.pid;
    expect(c.connectCount).toBe(1);
    expect(logger.lines.some((l) => /could not connect/.test(l))).toBe(false);
    const graph = await call(c, 'read_graph');
    expect(graph.isError).toBeFalsy();
    expect(c.pid).toBe(pid);
  }, 30_000);

  it('a dead server fails its first connect at once and says why, not "still starting"', async () => {
    const logger = recordingLogger();
    const dead = serverConfig('dead', { command: process.execPath, args: ['-e', 'console.error("boom: missing module"); process.exit(3)'] });
    const c = connection(dead, { connectTimeoutMs: 1_000, firstConnectTimeoutMs: 20_000, logger });
    const started = Date.now();
    expect(await c.start()).toBe(false);
    expect(Date.now() - started).toBeLessThan(1_500);
    const line = logger.lines.find((l) => /server "dead": could not connect/.test(l));
    expect(line).toMatch(/boom: missing module/);
    expect(logger.lines.some((l) => /still starting/.test(l))).toBe(false);
  });
});

describe('shutdown', () => {
  /** A stdio "server" that reads its input and never answers: initialize hangs. It writes its pid to `pidPath`. */
  const SILENT = (pidPath: string) => `require('fs').writeFileSync(${JSON.stringify(pidPath)}, String(process.pid)); process.stdin.resume(); setInterval(() => {}, 1000)`;

  it('closing a connection aborts a connect that is still waiting for initialize, and ends the server process', async () => {
    const pidPath = join(dir, 'silent.pid');
    const c = connection(serverConfig('silent', { command: process.execPath, args: ['-e', SILENT(pidPath)] }), { connectTimeoutMs: 30_000 });
    const starting = c.start();
    const pid = Number(await eventually(() => (existsSync(pidPath) ? readFileSync(pidPath, 'utf8') : ''), 'the server to be spawned'));
    const started = Date.now();
    await c.close();
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(await starting).toBe(false);
    await eventually(() => !alive(pid), 'the server process to exit', 3_000);
  });

  it('a worker process stops within seconds of SIGTERM while a server has not answered initialize', async () => {
    const pidPath = join(dir, 'silent-worker.pid');
    const configPath = writeMcpConfig(dir, { silent: { command: process.execPath, args: ['-e', SILENT(pidPath)] } }, 'silent.json');
    const worker = spawn(process.execPath, ['--import', 'tsx', 'workers/main.ts'], {
      cwd: PROJECT_ROOT,
      env: {
        ...process.env,
        MCP_CONFIG_PATH: configPath,
        // Long enough that a connect bounded by it would hold the exit for seconds (9.5 s in the report).
        MCP_CONNECT_TIMEOUT_MS: '8000',
        MCP_FIRST_CONNECT_TIMEOUT_MS: '60000',
        TEMPORAL_TASK_QUEUE: `mcp-recovery-${process.pid}-${Date.now()}`,
        MONGODB_DATABASE: `t_mcp_recovery_${process.pid}`,
        OPENAI_BASE_URL: 'http://127.0.0.1:9/v1',
        MAINTENANCE_EVERY_MS: '0',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    worker.stdout?.on('data', (d: Buffer) => (output += d.toString()));
    worker.stderr?.on('data', (d: Buffer) => (output += d.toString()));
    const exited = new Promise<number | null>((r) => worker.once('exit', (code) => r(code)));
    try {
      await eventually(() => /worker polling task queue/.test(output), 'the worker to start polling', 40_000);
      expect(output).toMatch(/still starting \(first connect\)/);
      const signalled = Date.now();
      worker.kill('SIGTERM');
      await exited;
      expect(Date.now() - signalled).toBeLessThan(3_000);
      await eventually(() => !alive(Number(readFileSync(pidPath, 'utf8'))), 'the server process to exit', 3_000);
    } finally {
      if (worker.exitCode === null) worker.kill('SIGKILL');
    }
  }, 60_000);
});
