/**
 * bench:mcp — what a session adds to an MCP tool call. A no-op MCP tool is
 * called (a) directly with the SDK client and (b) by the model through a real
 * session (model step -> tool activity -> shared MCP connection -> result
 * back in the workflow), over stdio and over streamable HTTP; the same no-op
 * as a native tool through the same session path shows what is Temporal's
 * and what is MCP's. Each path runs twice, once per placement of the tool
 * call: as a local activity, which is where a read-only tool goes when its
 * server declares it fast (`timeoutMs` at most 2000, as a no-op is), and as a
 * regular activity, where a read-only tool with the default 10 s timeout
 * goes. Prints per-call latency side by side and the added latency (median,
 * p95); the last line is one JSON object, whose `<transport>_added_ms_*` are
 * the local placement's. Last, recovery: the HTTP server is killed, kept down
 * for BENCH_MCP_OUTAGE_MS (8 s) and started again; the JSON line gains
 * `reconnect_ms_after_up` (listening -> connection ready) and
 * `first_call_after_up_ok` (target: true, the first session call after the
 * server is up succeeds). Brings up the local stack, the scripted model, the
 * example report server and a worker itself.
 *
 *   npx tsx bench/mcp.ts     (BENCH_MCP_CALLS=200 calls per path, BENCH_MCP_CALLS_PER_TURN=10)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { z } from 'zod';
import { AgentClient } from '../client';
import { silentMcpLogger } from '../activities/mcp';
import { SUMMARIZER_MARKER } from '../activities/summarize-activity';
import { defineTool, type NativeTool } from '../activities/tools/native-tool';
import { ScriptedModelServer, type ChatRequest, type StepResponse } from '../scripted-model';
import { lastUserIndex } from '../scripted-model/chat-request';
import { ensureStack } from '../scripts/stack';
import { emptySummary } from '../workflows/session-summary';
import { createAgentWorker } from '../workers/agent-worker';
import { loadConfig } from '../workers/config';
import { dataConverterFor } from '../codec/data-converter';
import { median, percentile, round } from './support/stats';

const CALLS = Number(process.env.BENCH_MCP_CALLS ?? 200);
/** Tool calls per turn, one per model step. A fresh session per turn keeps the context, and so each workflow task, as small as in a typical conversation. */
const CALLS_PER_TURN = Number(process.env.BENCH_MCP_CALLS_PER_TURN ?? 10);
const WARMUP = 10;
/** How long the HTTP server stays down in the recovery measurement. */
const OUTAGE_MS = Number(process.env.BENCH_MCP_OUTAGE_MS ?? 8_000);
const TARGET_ADDED_MS = 25;
const ROOT = resolve(__dirname, '..');
const SERVER_MAIN = join(ROOT, 'examples/mcp-report-server/main.ts');
const TRANSPORTS = ['stdio', 'http'] as const;
type TransportKind = (typeof TRANSPORTS)[number];
/** Where the session runs the tool call: `local` for a read-only tool declared fast, `activity` for the default timeout. */
const PLACEMENTS = ['local', 'activity'] as const;
type Placement = (typeof PLACEMENTS)[number];
/** The timeout a fast read-only server declares; at most LOCAL_TOOL_MAX_TIMEOUT_MS, so its calls run as local activities. */
const FAST_TIMEOUT_MS = 2_000;

const serverName = (kind: TransportKind, placement: Placement) => `bench_${kind}${placement === 'local' ? '' : '_act'}`;
const mcpToolName = (kind: TransportKind, placement: Placement) => `mcp_${serverName(kind, placement)}_noop`;
const nativeToolName = (placement: Placement) => (placement === 'local' ? 'local_noop_fast' : 'local_noop');

/** The same no-op as a native tool: what a session costs a tool call with no MCP in it. */
const nativeNoop = (placement: Placement) =>
  defineTool({
    name: placement === 'local' ? 'noop_fast' : 'noop',
    description: 'Does nothing and answers "ok".',
    parameters: z.object({}),
    risk: 'read',
    ...(placement === 'local' ? { timeoutMs: FAST_TIMEOUT_MS } : {}),
    execute: async () => 'ok',
  }) as unknown as NativeTool;


async function startHttpServer(port = 0): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, ['--import', 'tsx', SERVER_MAIN, '--http', '--port', String(port)], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise<string>((ok, fail) => {
    child.stdout?.on('data', (d: Buffer) => {
      const match = /listening (\S+)/.exec(d.toString());
      if (match?.[1]) ok(match[1]);
    });
    child.once('exit', (code) => fail(new Error(`report server exited with ${code}`)));
  });
  return { url, child };
}

/** The no-op called with the SDK client in a loop: the baseline. */
async function directCalls(kind: TransportKind, httpUrl: string): Promise<number[]> {
  const client = new McpClient({ name: 'bench-direct', version: '1.0.0' });
  const transport =
    kind === 'stdio'
      ? new StdioClientTransport({ command: process.execPath, args: ['--import', 'tsx', SERVER_MAIN, '--stdio'], cwd: ROOT, stderr: 'ignore' })
      : new StreamableHTTPClientTransport(new URL(httpUrl));
  await client.connect(transport);
  const samples: number[] = [];
  try {
    for (let i = 0; i < CALLS + WARMUP; i++) {
      const started = performance.now();
      await client.callTool({ name: 'noop', arguments: {} });
      if (i >= WARMUP) samples.push(performance.now() - started);
    }
  } finally {
    await client.close();
  }
  return samples;
}

function toolResultsThisTurn(req: ChatRequest): number {
  return req.messages.slice(lastUserIndex(req) + 1).filter((m) => m.role === 'tool').length;
}

/** The user message names the tool; the model calls it once per step, CALLS_PER_TURN times, then answers. */
function benchModel(req: ChatRequest): StepResponse {
  const system = String(req.messages[0]?.content ?? '');
  if (system.startsWith(SUMMARIZER_MARKER)) return { kind: 'json', value: emptySummary() };
  const tool = String(req.messages[lastUserIndex(req)]?.content ?? '').split(' ')[1] ?? '';
  if (toolResultsThisTurn(req) < CALLS_PER_TURN) return { kind: 'tool_calls', calls: [{ name: tool, arguments: {} }] };
  return { kind: 'text', text: 'done' };
}

/**
 * Per-call latency through a session: `durationMs` of each tool_call_result,
 * measured by the workflow from the task that scheduled the tool activity to
 * the task that received its result (scheduling, dispatch, the call,
 * completion and the next workflow task all included). The tools take turns,
 * one session each per round, so drift in the machine's speed hits all alike.
 */
async function sessionCalls(agent: AgentClient, tools: string[]): Promise<Map<string, number[]>> {
  const samples = new Map(tools.map((t) => [t, [] as number[]]));
  for (let round = 0; [...samples.values()].some((xs) => xs.length < CALLS + WARMUP); round++) {
    for (const tool of tools) {
      const sessionId = `bench-mcp-${tool}-${Date.now()}-${round}`;
      const options = { sessionId, namespace: { tenant: 'bench', user: 'bench' }, limits: { maxSteps: CALLS_PER_TURN + 1 }, memory: { enabled: false } };
      const { turnId } = await agent.send(options, { text: `call ${tool}` });
      // Events are read after the turn: a live subscriber polls the workflow (an update per poll),
      // which would add workflow tasks between the calls being measured.
      await agent.waitForTurn(sessionId, turnId);
      for await (const { event } of agent.events(sessionId)) {
        if (event.type === 'tool_call_result') {
          if (!event.ok) throw new Error(`${tool} failed: ${event.preview}`);
          samples.get(tool)!.push(event.durationMs);
        }
        if (event.type === 'turn_completed' && event.turnId === turnId) break;
      }
      await agent.end(sessionId).catch(() => undefined);
    }
  }
  return new Map([...samples].map(([tool, xs]) => [tool, xs.slice(WARMUP, WARMUP + CALLS)]));
}

/**
 * Recovery after an outage: the HTTP server is killed, stays down for
 * OUTAGE_MS (long enough for the backoff to grow past several seconds), and is
 * started again on its port. A session's tool call is sent the moment the
 * server listens. `reconnect_ms_after_up`: from listening to the connection
 * being ready again; the target is that the first call after the server is up
 * succeeds (`first_call_after_up_ok`), rather than failing until the next
 * backoff step (up to 30 s later).
 */
async function reconnectAfterUp(
  agent: AgentClient,
  worker: Awaited<ReturnType<typeof createAgentWorker>>,
  http: { url: string; child: ChildProcess },
): Promise<{ figures: Record<string, number | boolean>; http: { url: string; child: ChildProcess } }> {
  const name = serverName('http', 'activity');
  const connection = worker.mcp!.pool.connection(name)!;
  const port = Number(new URL(http.url).port);
  const exited = new Promise((r) => http.child.once('exit', r));
  http.child.kill('SIGKILL');
  await exited;
  const probe = () => connection.callTool('noop', {}, { signal: new AbortController().signal, timeoutMs: 2_000 }).catch(() => undefined);
  while (connection.status === 'ready') await probe();
  await new Promise((r) => setTimeout(r, OUTAGE_MS));
  const restarted = await startHttpServer(port);
  const upAt = performance.now();
  let readyAt = 0;
  const watch = setInterval(() => {
    if (!readyAt && connection.status === 'ready') readyAt = performance.now();
  }, 1);
  const tool = mcpToolName('http', 'activity');
  const sessionId = `bench-mcp-reconnect-${Date.now()}`;
  const options = { sessionId, namespace: { tenant: 'bench', user: 'bench' }, limits: { maxSteps: CALLS_PER_TURN + 1 }, memory: { enabled: false } };
  const { turnId } = await agent.send(options, { text: `call ${tool}` });
  let first: { ok: boolean; at: number } | undefined;
  for await (const { event } of agent.events(sessionId)) {
    if (event.type === 'tool_call_result' && !first) first = { ok: event.ok, at: performance.now() };
    if (event.type === 'turn_completed' && event.turnId === turnId) break;
  }
  clearInterval(watch);
  await agent.end(sessionId).catch(() => undefined);
  const figures = {
    outage_ms: OUTAGE_MS,
    reconnect_ms_after_up: readyAt ? round(readyAt - upAt) : -1,
    first_call_after_up_ok: first?.ok ?? false,
    first_call_after_up_ms: first ? round(first.at - upAt) : -1,
  };
  console.log('');
  console.log(`Outage of ${OUTAGE_MS} ms on the HTTP server, then up again: connection ready ${figures.reconnect_ms_after_up} ms after the server listened;`);
  console.log(`first session tool call after it was up: ${figures.first_call_after_up_ok ? 'succeeded' : 'FAILED'}, result ${figures.first_call_after_up_ms} ms after up.`);
  return { figures, http: restarted };
}

interface Row {
  direct: number[];
  session: number[];
  native: number[];
}

function printTable(rows: Record<Placement, Record<TransportKind, Row>>): Record<string, number> {
  const figures: Record<string, number> = {};
  const num = (n: number) => n.toFixed(2).padStart(7);
  const pair = (values: readonly [number, number]) => `${num(values[0])} /${num(values[1])}`.padStart(18);
  const p50p95 = (xs: number[]) => [median(xs), percentile(xs, 95)] as const;
  console.log('');
  console.log(`No-op tool, ${CALLS} calls per path after ${WARMUP} warm-up calls, ${CALLS_PER_TURN} calls per turn; ms per call, p50 / p95`);
  console.log(`${''.padEnd(20)}${'direct SDK'.padStart(18)}${'via session'.padStart(18)}${'added'.padStart(18)}${'vs native tool'.padStart(18)}`);
  for (const placement of PLACEMENTS) {
    for (const kind of TRANSPORTS) {
      const { direct, session, native } = rows[placement][kind];
      const added = [median(session) - median(direct), percentile(session, 95) - percentile(direct, 95)] as const;
      const overNative = [median(session) - median(native), percentile(session, 95) - percentile(native, 95)] as const;
      console.log(`${`${kind}, ${placement === 'local' ? 'local act.' : 'activity'}`.padEnd(20)}${pair(p50p95(direct))}${pair(p50p95(session))}${pair(added)}${pair(overNative)}`);
      const prefix = placement === 'local' ? kind : `${kind}_activity`;
      Object.assign(figures, {
        [`${prefix}_direct_ms_median`]: round(median(direct)),
        [`${prefix}_direct_ms_p95`]: round(percentile(direct, 95)),
        [`${prefix}_session_ms_median`]: round(median(session)),
        [`${prefix}_session_ms_p95`]: round(percentile(session, 95)),
        [`${prefix}_added_ms_median`]: round(added[0]),
        [`${prefix}_added_ms_p95`]: round(added[1]),
        [`${prefix}_over_native_ms_median`]: round(overNative[0]),
      });
    }
    const native = rows[placement].stdio.native;
    console.log(`${`native, ${placement === 'local' ? 'local act.' : 'activity'}`.padEnd(20)}${''.padStart(18)}${pair(p50p95(native))}`);
    figures[`native_${placement}_session_ms_median`] = round(median(native));
    figures[`native_${placement}_session_ms_p95`] = round(percentile(native, 95));
  }
  console.log('');
  console.log('direct SDK: client.callTool on a connected SDK client. via session: tool_call_result.durationMs, measured');
  console.log('by the workflow from scheduling the tool call to receiving its result (for a regular activity that spans');
  console.log('two workflow tasks and the server; a local activity runs inside the workflow task). added = via session -');
  console.log('direct SDK; vs native tool = via session - the same native no-op via session (what MCP adds in a session).');
  console.log(`local act.: servers declared fast (timeoutMs ${FAST_TIMEOUT_MS}), read-only tool -> local activity; activity: default timeout.`);
  console.log(`Target: at most ${TARGET_ADDED_MS} ms added per call.`);
  return figures;
}

async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  const stack = await ensureStack({ log: (l) => process.stderr.write(`[stack] ${l}\n`) });
  let http = await startHttpServer();
  const model = await ScriptedModelServer.start({ fallback: benchModel });
  const dir = mkdtempSync(join(tmpdir(), 'bench-mcp-'));
  const mcpConfig = join(dir, 'mcp.json');
  writeFileSync(
    mcpConfig,
    JSON.stringify({
      mcpServers: Object.fromEntries(
        PLACEMENTS.flatMap((placement) => {
          const timeout = placement === 'local' ? { timeoutMs: FAST_TIMEOUT_MS } : {};
          return [
            [serverName('stdio', placement), { command: process.execPath, args: ['--import', 'tsx', SERVER_MAIN, '--stdio'], cwd: ROOT, allowTools: ['noop'], ...timeout }],
            [serverName('http', placement), { type: 'http', url: http.url, allowTools: ['noop'], ...timeout }],
          ];
        }),
      ),
    }),
  );
  const taskQueue = `bench-mcp-${Date.now()}`;
  const config = loadConfig({
    ...process.env,
    TEMPORAL_ADDRESS: stack.temporalAddress,
    MONGODB_URI: stack.mongoUri,
    MONGODB_DATABASE: 'bench_mcp',
    TEMPORAL_TASK_QUEUE: taskQueue,
    OPENAI_BASE_URL: model.baseUrl,
    OPENAI_API_KEY: 'bench',
    MCP_CONFIG_PATH: mcpConfig,
    MAINTENANCE_EVERY_MS: '0',
  });
  const worker = await createAgentWorker(config, { mcpLogger: silentMcpLogger, extraTools: PLACEMENTS.map(nativeNoop) });
  const running = worker.run();
  const connection = await Connection.connect({ address: config.temporal.address });
  const agent = new AgentClient({ client: new Client({ connection, namespace: config.temporal.namespace, dataConverter: dataConverterFor(config.encryption) }), taskQueue, principal: { tenant: 'bench', user: 'bench' } });
  try {
    const direct = new Map<TransportKind, number[]>();
    for (const kind of TRANSPORTS) {
      process.stderr.write(`${kind}: direct SDK calls...\n`);
      direct.set(kind, await directCalls(kind, http.url));
    }
    process.stderr.write('through sessions (stdio, http and native, each as a local and as a regular activity, in turn)...\n');
    const tools = PLACEMENTS.flatMap((p) => [...TRANSPORTS.map((k) => mcpToolName(k, p)), nativeToolName(p)]);
    const viaSession = await sessionCalls(agent, tools);
    const rows = Object.fromEntries(
      PLACEMENTS.map((p) => [
        p,
        Object.fromEntries(
          TRANSPORTS.map((k) => [k, { direct: direct.get(k)!, session: viaSession.get(mcpToolName(k, p))!, native: viaSession.get(nativeToolName(p))! }]),
        ),
      ]),
    ) as Record<Placement, Record<TransportKind, Row>>;
    const figures = printTable(rows);
    process.stderr.write(`recovery: HTTP server down for ${OUTAGE_MS} ms, then up...\n`);
    const recovery = await reconnectAfterUp(agent, worker, http);
    http = recovery.http;
    console.log(JSON.stringify({ calls: CALLS, calls_per_turn: CALLS_PER_TURN, ...figures, target_added_ms: TARGET_ADDED_MS, ...recovery.figures }));
  } finally {
    worker.worker.shutdown();
    await running;
    await connection.close();
    await model.close();
    http.child.kill();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
