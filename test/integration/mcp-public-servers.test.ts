import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseMcpConfig } from '../../activities/mcp/mcp-config';
import { McpConnection } from '../../activities/mcp/mcp-connection';
import { workflowIdFor } from '../../workflows/messages';
import { runsLocally } from '../../workflows/react-turn';
import { collectEvents, eventually, sessionOptions, startTestEnv, turnCompleted, uniqueId, type TestEnv } from '../support/test-env';
import { PROJECT_ROOT, freePort, recordingLogger, tempDir, writeMcpConfig } from '../support/mcp-servers';
import { lastToolContent, scriptCall } from '../support/scripted-steps';

/**
 * The public servers from npm (dev dependencies, run with node from
 * node_modules, never downloaded by npx), through a real worker and session.
 */

const dir = tempDir('mcp-public');
const bin = (pkg: string) => require.resolve(`@modelcontextprotocol/${pkg}/dist/index.js`, { paths: [PROJECT_ROOT] });
const EVERYTHING = bin('server-everything');
const files = join(dir, 'files');
const logger = recordingLogger();
let env: TestEnv;

beforeAll(async () => {
  mkdirSync(files, { recursive: true });
  writeFileSync(join(files, 'notes.txt'), 'quarterly notes');
  const configPath = writeMcpConfig(dir, {
    everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] },
    filesystem: { command: process.execPath, args: [bin('server-filesystem'), files], fastReadOnly: true },
    memory: { command: process.execPath, args: [bin('server-memory')], env: { MEMORY_FILE_PATH: join(dir, 'memory.json') } },
  });
  env = await startTestEnv({ name: 'mcp-public', configEnv: { MCP_CONFIG_PATH: configPath }, mcpLogger: logger });
});
afterAll(async () => {
  await env?.close();
});

const catalog = () => new Map(env.worker.mcp!.toolSource.current().catalog.tools.map((t) => [t.name, t]));

describe('public MCP servers through a session', () => {
  it('does not offer a tool that requires task-based execution, and logs why', () => {
    const tools = catalog();
    expect(tools.has('mcp_everything_echo')).toBe(true);
    expect(tools.has('mcp_everything_trigger-long-running-operation')).toBe(true);
    expect(tools.has('mcp_everything_simulate-research-query')).toBe(false);
    expect(logger.lines).toContainEqual(expect.stringMatching(/server "everything": tool "simulate-research-query" is not offered: it declares execution\.taskSupport "required"/));
  });

  it('streams the final progress notification of every call before its result', async () => {
    const sessionId = uniqueId('s');
    const calls = Array.from({ length: 5 }, (_, i) => ({ id: `call_${i}`, name: 'mcp_everything_trigger-long-running-operation', arguments: { duration: 0, steps: 3 } }));
    env.model.script(
      [
        { respond: { kind: 'tool_calls', calls } },
        { match: { hasToolResults: true }, respond: { kind: 'text', text: 'All done.' } },
      ],
      { lane: sessionId },
    );
    const { turnId } = await env.agent.send(sessionOptions(sessionId), { text: 'run five operations' });
    const events = (await collectEvents(env.agent, sessionId, turnCompleted(turnId))).map((e) => e.event);
    for (const { id } of calls) {
      const resultAt = events.findIndex((e) => e.type === 'tool_call_result' && e.toolCallId === id);
      const finalAt = events.findIndex((e) => e.type === 'tool_call_progress' && e.toolCallId === id && e.progress === 3 && e.total === 3);
      expect(resultAt).toBeGreaterThan(-1);
      expect(finalAt).toBeGreaterThan(-1);
      expect(finalAt).toBeLessThan(resultAt);
    }
  });

  it('runs a fastReadOnly server read-only tools as local activities, and its other tools as regular ones', async () => {
    const tools = catalog();
    const list = tools.get('mcp_filesystem_list_directory')!;
    expect(list).toMatchObject({ risk: 'read', timeoutMs: 2_000 });
    expect(runsLocally(list)).toBe(true);
    const write = tools.get('mcp_filesystem_write_file')!;
    expect(write.risk).not.toBe('read');
    expect(write.timeoutMs).toBe(env.config.limits.toolTimeoutMs);
    expect(runsLocally(write)).toBe(false);

    const sessionId = uniqueId('s');
    scriptCall(env.model, sessionId, 'mcp_filesystem_list_directory', { path: files }, 'One file.');
    const { turnId } = await env.agent.send(sessionOptions(sessionId), { text: 'what files are there?' });
    expect(await env.agent.waitForTurn(sessionId, turnId)).toMatchObject({ outcome: 'completed', text: 'One file.' });
    expect(lastToolContent(env.model, sessionId)).toMatch(/notes\.txt/);
    const history = await env.client.workflow.getHandle(workflowIdFor(sessionId)).fetchHistory();
    const scheduled = (history.events ?? []).filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'executeTool');
    expect(scheduled).toEqual([]);
  });

  it('calls the memory server by its clean names', async () => {
    const sessionId = uniqueId('s');
    scriptCall(env.model, sessionId, 'mcp_memory_read_graph', {}, 'Empty.');
    const { turnId } = await env.agent.send(sessionOptions(sessionId), { text: 'what do you know?' });
    expect(await env.agent.waitForTurn(sessionId, turnId)).toMatchObject({ outcome: 'completed' });
    expect(JSON.parse(lastToolContent(env.model, sessionId))).toMatchObject({ entities: [], relations: [] });
  });
});

describe('the final progress notification, at the connection', () => {
  const runs = 20;
  async function finalsSeen(connection: McpConnection): Promise<number> {
    let seen = 0;
    for (let i = 0; i < runs; i++) {
      const progress: number[] = [];
      await connection.callTool('trigger-long-running-operation', { duration: 0, steps: 3 }, { signal: new AbortController().signal, timeoutMs: 10_000, onprogress: (p) => progress.push(p.progress) });
      if (progress.at(-1) === 3) seen += 1;
    }
    return seen;
  }
  const server = (entry: Record<string, unknown>) => parseMcpConfig({ mcpServers: { everything: entry } }, { env: {} }).servers[0]!;
  const options = { connectTimeoutMs: 15_000, refreshIntervalMs: 600_000, logger: recordingLogger() };

  it('reaches onprogress before the call returns, over stdio', async () => {
    const connection = new McpConnection(server({ command: process.execPath, args: [EVERYTHING, 'stdio'] }), options);
    try {
      expect(await connection.start()).toBe(true);
      expect(await finalsSeen(connection)).toBe(runs);
    } finally {
      await connection.close();
    }
  });

  it('reaches onprogress before the call returns, over streamable HTTP', async () => {
    const port = await freePort();
    const child: ChildProcess = spawn(process.execPath, [EVERYTHING, 'streamableHttp'], { env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
    child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
    const connection = new McpConnection(server({ type: 'http', url: `http://127.0.0.1:${port}/mcp` }), options);
    try {
      await eventually(() => /listening on port/.test(output), 'server-everything to listen');
      expect(await connection.start()).toBe(true);
      expect(await finalsSeen(connection)).toBe(runs);
    } finally {
      await connection.close();
      child.kill('SIGKILL');
    }
  });
});
