/**
 * `npm run bench:cold-start`: what a worker restart costs the next turn.
 *
 * One session (memory on, 2,000 memories in its namespace, two stdio MCP
 * servers, a turn = model call, two MCP tool calls in parallel, model call)
 * runs a few turns on a first worker, which is then stopped (SIGTERM, as a
 * deploy does). A new worker process starts, and as soon as it polls the
 * session's next turn is sent: that turn replays the session's history on
 * the new worker, reads the memories' stored recall copy, makes the worker's
 * first model request and its first MCP calls. Warm turns on the same worker
 * follow, as the baseline of the same run. This is done twice, alternating:
 * with the workflow code bundled at start (`npm run worker` without
 * WORKFLOW_BUNDLE_PATH) and with a prebuilt bundle (`npm run build:workflows`).
 *
 * Each worker start is broken down (node and modules, MongoDB, indexes, MCP
 * connections, Temporal connection, Worker.create with or without bundling)
 * and each measured turn by the session's history (workflow tasks, which on a
 * new worker include the replay; activities by type). The last line printed
 * is one JSON object.
 *
 *   npm run bench:cold-start -- [--rounds 2] [--warm-turns 5] [--memories 2000]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { MongoClient } from 'mongodb';
import { OfflineEmbedder } from '../activities/memory/embedder';
import { MemoryRepository } from '../activities/memory/memory-repository';
import { AgentClient } from '../client/agent-client';
import { dataConverterFor } from '../codec/data-converter';
import { ScriptedModelServer, type ChatRequest, type StepResponse } from '../scripted-model';
import { lastUserIndex } from '../scripted-model/chat-request';
import { buildWorkflowBundle } from '../scripts/build-workflow-bundle';
import { ensureStack } from '../scripts/stack';
import { stdioReportServer, tempDir, writeMcpConfig } from '../test/support/mcp-servers';
import { workflowIdFor } from '../workflows/messages';
import { loadConfig } from '../workers/config';
import { addSessionHistory, emptyBreakdown, type Breakdown } from './support/history-breakdown';
import { intOption } from './support/int-option';
import { seedInputs } from './support/memory-seed';
import { median, round } from './support/stats';

const WORKER_MAIN = join(__dirname, 'support', 'cold-start-worker.ts');
const NAMESPACE = { tenant: 'bench', user: 'cold-start' };
const TOOLS = [
  { name: 'mcp_reports_query_report', arguments: { report: 'revenue', quarter: '2025-Q2', region: 'emea' } },
  { name: 'mcp_ledger_noop', arguments: {} },
];

function options() {
  const { values } = parseArgs({
    options: {
      rounds: { type: 'string', default: '2' },
      'warm-turns': { type: 'string', default: '5' },
      memories: { type: 'string', default: '2000' },
    },
  });
  return {
    rounds: intOption('rounds', values.rounds, 1, 20),
    warmTurns: intOption('warm-turns', values['warm-turns'], 1, 100),
    memories: intOption('memories', values.memories, 0, 100_000),
  };
}

const log = (line: string): void => void process.stderr.write(`${line}\n`);

/** Two MCP tools in parallel, then the answer; extraction requests (JSON mode) get no candidates. */
function benchModel(): Promise<ScriptedModelServer> {
  return ScriptedModelServer.start({
    fallback: (req: ChatRequest): StepResponse => {
      if ((req as { response_format?: unknown }).response_format) return { kind: 'text', text: '{"candidates":[]}' };
      const toolResults = req.messages.slice(lastUserIndex(req) + 1).filter((m) => m.role === 'tool').length;
      if (toolResults === 0) return { kind: 'tool_calls', calls: TOOLS };
      return { kind: 'text', text: 'Revenue in EMEA for 2025-Q2 is in the report.', chunkSize: 64 };
    },
  });
}

interface WorkerStart {
  proc: ChildProcess;
  /** Spawn to polling, as the bench saw it. */
  readyMs: number;
  phases: Record<string, number | boolean>;
  /** Every activity call since, as the worker timed it (local activities included). */
  calls: Array<{ activity: string; ms: number }>;
}

/** Starts a worker process and resolves when it polls, with its own account of where the start went. */
function startWorker(env: NodeJS.ProcessEnv, label: string): Promise<WorkerStart> {
  const spawnedAt = performance.now();
  const proc = spawn(process.execPath, ['--import', 'tsx', WORKER_MAIN], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  proc.stderr?.on('data', (d: Buffer) => {
    for (const line of d.toString().split('\n')) if (line.trim()) log(`[${label}] ${line}`);
  });
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`${label} did not start within 120 s`)), 120_000);
    proc.once('exit', (code) => reject(new Error(`${label} exited with ${code} before it polled`)));
    proc.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      const line = out.split('\n').find((l) => l.startsWith('{"ready":true'));
      if (!line) return;
      clearTimeout(timer);
      const started: WorkerStart = { proc, readyMs: performance.now() - spawnedAt, phases: JSON.parse(line) as Record<string, number | boolean>, calls: [] };
      proc.stdout?.removeAllListeners('data');
      let rest = out.slice(out.indexOf(line) + line.length);
      proc.stdout?.on('data', (chunk: Buffer) => {
        rest += chunk.toString();
        const lines = rest.split('\n');
        rest = lines.pop() ?? '';
        for (const l of lines) if (l.startsWith('{"activity"')) started.calls.push(JSON.parse(l) as { activity: string; ms: number });
      });
      resolve(started);
    });
  });
}

/** SIGTERM (the worker drains and exits, as in a deploy), SIGKILL if it has not gone after 20 s. */
async function stopWorker(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  const gone = new Promise((resolve) => proc.once('exit', resolve));
  proc.kill('SIGTERM');
  const timer = setTimeout(() => proc.kill('SIGKILL'), 20_000);
  await gone;
  clearTimeout(timer);
}

interface TurnSample {
  ms: number;
  breakdown: Breakdown;
  /** Time in each activity during the turn, summed by name, as the worker timed it. */
  activities: Map<string, number>;
}

/**
 * Where a turn went: workflow task run and queue time from the history (a
 * new worker's first task includes replaying the session), and the time in
 * each activity as the worker timed it (local activities such as recall run
 * inside a workflow task: its run time includes them).
 */
function describe(turn: TurnSample): Record<string, number> {
  const b = turn.breakdown;
  const out: Record<string, number> = {
    workflow_task_run_ms: round(b.workflowTaskRun, 1),
    workflow_task_queue_ms: round(b.workflowTaskQueue, 1),
    activity_dispatch_ms: round(b.activityDispatch, 1),
  };
  for (const [name, total] of turn.activities) out[`${name}_ms`] = round(total, 1);
  return out;
}

/** The median of each figure over several turns. */
function medianOf(samples: Array<Record<string, number>>): Record<string, number> {
  const keys = [...new Set(samples.flatMap((s) => Object.keys(s)))];
  return Object.fromEntries(keys.map((k) => [k, round(median(samples.map((s) => s[k] ?? 0)), 1)]));
}

async function main(workers: ChildProcess[]): Promise<void> {
  const opts = options();
  const stack = await ensureStack({ log: (line) => log(`[stack] ${line}`) });
  const id = randomUUID().slice(0, 8);
  const dir = tempDir('bench-cold-start');
  const database = `bench_cold_${id}`;

  log('[bench] building the workflow bundle (npm run build:workflows)');
  const bundleStarted = performance.now();
  const bundlePath = await buildWorkflowBundle(join(dir, 'workflow-bundle.js'));
  const bundleBuildMs = performance.now() - bundleStarted;

  const mcpConfigPath = writeMcpConfig(dir, { reports: stdioReportServer(join(dir, 'reports.jsonl')), ledger: stdioReportServer(join(dir, 'ledger.jsonl')) });
  const model = await benchModel();
  const mongo = await new MongoClient(stack.mongoUri).connect();
  let agent: AgentClient | undefined;
  try {
    const db = mongo.db(database);
    await db.dropDatabase();
    const repo = new MemoryRepository(db);
    await repo.ensureIndexes();
    if (opts.memories > 0) {
      log(`[bench] seeding ${opts.memories} memories in ${JSON.stringify(NAMESPACE)}`);
      const now = new Date();
      await repo.forNamespace(NAMESPACE).importMany(seedInputs(opts.memories, 'bench-seed', now, new OfflineEmbedder()), now);
    }

    const env: NodeJS.ProcessEnv = {
      ...process.env,
      TEMPORAL_ADDRESS: stack.temporalAddress,
      TEMPORAL_NAMESPACE: stack.temporalNamespace,
      TEMPORAL_TASK_QUEUE: `bench-cold-${id}`,
      MONGODB_URI: stack.mongoUri,
      MONGODB_DATABASE: database,
      OPENAI_BASE_URL: model.baseUrl,
      OPENAI_API_KEY: 'bench',
      MODEL_NAME: 'bench',
      MCP_CONFIG_PATH: mcpConfigPath,
      // No maintenance schedule on a throwaway queue.
      MAINTENANCE_EVERY_MS: '0',
      // The seeded memories carry word-hashing vectors; a worker on another embedder would skip them all.
      EMBEDDING_MODEL: 'offline-hash',
      // A shared, loaded FerretDB can take seconds to answer a new connection; the default 3 s can fail the start instead of timing it.
      MONGODB_SERVER_SELECTION_TIMEOUT_MS: '9000',
    };
    const config = loadConfig(env);
    agent = await AgentClient.connect({
      address: config.temporal.address,
      namespace: config.temporal.namespace,
      taskQueue: config.temporal.taskQueue,
      dataConverter: dataConverterFor(config.encryption),
      principal: NAMESPACE,
    });
    const client = agent;
    const sessionId = `cold-${id}`;
    let lastEvent = 0;
    let turns = 0;
    const turn = async (worker: WorkerStart): Promise<TurnSample> => {
      const callsBefore = worker.calls.length;
      const started = performance.now();
      // Recall runs every turn; extraction never does, so a turn is the same on every worker.
      const session = { sessionId, namespace: NAMESPACE, channel: 'bench', memory: { extractEveryTurns: 100 } };
      const { turn: result } = await client.ask(session, { text: `How did EMEA revenue do in 2025-Q2? (${++turns})` });
      const ms = performance.now() - started;
      if (result.outcome !== 'completed' || result.toolCalls !== TOOLS.length) throw new Error(`turn ${turns} did not run as scripted: ${JSON.stringify(result)}`);
      const activities = new Map<string, number>();
      for (const call of worker.calls.slice(callsBefore)) activities.set(call.activity, (activities.get(call.activity) ?? 0) + call.ms);
      const breakdown = emptyBreakdown();
      lastEvent = await addSessionHistory(client.client, sessionId, breakdown, lastEvent);
      return { ms, breakdown, activities };
    };

    // The session's life before the restart; its first recall reads the namespace in full and stores the copy.
    log('[bench] first worker: warming the session');
    const first = await startWorker({ ...env, WORKFLOW_BUNDLE_PATH: bundlePath }, 'worker-0');
    workers.push(first.proc);
    // Its first turn is also a fresh worker's, with no recall copy stored yet: the recall reads the namespace in full.
    const noCopy = await turn(first);
    for (let i = 0; i < 2; i++) await turn(first);
    await stopWorker(first.proc);

    const variants = [
      { key: 'bundled_at_start', bundle: undefined },
      { key: 'prebuilt_bundle', bundle: bundlePath },
    ];
    const results = new Map<string, Array<{ start: WorkerStart; first: TurnSample; warm: TurnSample[]; historyEvents: number }>>(variants.map((v) => [v.key, []]));
    for (let round_ = 1; round_ <= opts.rounds; round_++) {
      for (const variant of round_ % 2 === 1 ? variants : [...variants].reverse()) {
        const label = `${variant.key}-${round_}`;
        const start = await startWorker(variant.bundle ? { ...env, WORKFLOW_BUNDLE_PATH: variant.bundle } : env, label);
        workers.push(start.proc);
        // The new worker replays the whole history before it runs the turn: its length matters.
        const historyEvents = lastEvent;
        const firstTurn = await turn(start);
        const warm: TurnSample[] = [];
        for (let i = 0; i < opts.warmTurns; i++) warm.push(await turn(start));
        await stopWorker(start.proc);
        results.get(variant.key)?.push({ start, first: firstTurn, warm, historyEvents });
        log(`[bench] ${label}: worker ready in ${round(start.readyMs)} ms, first turn ${round(firstTurn.ms)} ms (replaying ${historyEvents} history events), warm turn median ${round(median(warm.map((w) => w.ms)))} ms`);
      }
    }
    await client.client.workflow.getHandle(workflowIdFor(sessionId)).terminate('benchmark over').catch(() => undefined);

    const summary = Object.fromEntries(
      [...results].map(([key, runs]) => {
        const warm = runs.flatMap((r) => r.warm);
        const startPhases = medianOf(runs.map((r) => Object.fromEntries(Object.entries(r.start.phases).filter((e): e is [string, number] => typeof e[1] === 'number'))));
        return [
          key,
          {
            worker_ready_ms: round(median(runs.map((r) => r.start.readyMs)), 1),
            first_turn_after_restart_ms: round(median(runs.map((r) => r.first.ms)), 1),
            warm_turn_ms: round(median(warm.map((w) => w.ms)), 1),
            first_vs_warm: round(median(runs.map((r) => r.first.ms)) / median(warm.map((w) => w.ms)), 2),
            history_events_at_restart: runs.map((r) => r.historyEvents),
            start: startPhases,
            first_turn: medianOf(runs.map((r) => describe(r.first))),
            warm_turn: medianOf(warm.map((w) => describe(w))),
          },
        ];
      }),
    ) as Record<string, { worker_ready_ms: number; first_turn_after_restart_ms: number; warm_turn_ms: number; first_vs_warm: number }>;
    const prebuilt = summary.prebuilt_bundle;
    const bundled = summary.bundled_at_start;
    if (!prebuilt || !bundled) throw new Error('a variant has no results');
    for (const [key, s] of Object.entries(summary)) log(`[bench] ${key}: ${JSON.stringify(s)}`);
    console.log(
      JSON.stringify({
        first_turn_after_restart_ms: prebuilt.first_turn_after_restart_ms,
        warm_turn_ms: prebuilt.warm_turn_ms,
        first_vs_warm: prebuilt.first_vs_warm,
        worker_ready_ms: prebuilt.worker_ready_ms,
        restart_to_first_answer_ms: round(prebuilt.worker_ready_ms + prebuilt.first_turn_after_restart_ms, 1),
        before_lever: {
          worker_ready_ms: bundled.worker_ready_ms,
          first_turn_after_restart_ms: bundled.first_turn_after_restart_ms,
          restart_to_first_answer_ms: round(bundled.worker_ready_ms + bundled.first_turn_after_restart_ms, 1),
        },
        first_turn_without_recall_copy: { ms: round(noCopy.ms, 1), ...describe(noCopy) },
        bundle_build_ms: round(bundleBuildMs, 1),
        // The machine is shared: the 1-minute load average at the end says how busy it was.
        load_average: round(loadavg()[0] ?? 0, 2),
        rounds: opts.rounds,
        memories: opts.memories,
        mcp_servers: 2,
        variants: summary,
      }),
    );
  } finally {
    await agent?.client.connection.close().catch(() => undefined);
    await mongo.db(database).dropDatabase().catch(() => undefined);
    await mongo.close();
    await model.close();
  }
}

const workers: ChildProcess[] = [];
main(workers)
  .catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(() => {
    for (const proc of workers) if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
  });
