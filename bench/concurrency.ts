/**
 * `npm run bench:concurrency`: many sessions at once on real worker processes.
 *
 * Phase 1: `--sessions` sessions run side by side on ONE worker process, each
 * sending `--turns` turns of `--steps` steps (a step is a model call and a
 * no-op tool call; the last step answers). Phase 2: the same with TWO worker
 * processes on the task queue, and one of them SIGKILLed once `--kill-at` of
 * the turns are done. Workers and the scripted model each run in a process of
 * their own, so the RSS sampled (/proc/<pid>/status, every 200 ms) is the
 * worker's alone and the kill is real. A single session's step time, measured
 * first on the same worker, is the baseline the step p95 is judged against.
 * Last, a third worker (workflows in its main thread) holds the same number
 * of idle sessions, to weigh a cached session by its heap after a full GC;
 * RSS alone also counts garbage not yet collected.
 *
 * Every turn is checked twice: its answer to the caller, and the session's
 * event stream read whole afterwards (a turn answered twice or incompletely
 * counts as lost; one whose stream cannot be read, as unverified). CPU time
 * is read per process from /proc (the Temporal server and MongoDB are shared
 * with whatever else runs on the machine). Workers take their WORKER_*
 * tuning from the environment. The last line printed is one JSON object:
 * phase 1 at the top level, phase 2 under `kill`, the tuning under `tuning`.
 *
 * `--model-ms` makes every model call wait that long before its answer
 * starts (0 by default: the model answers at once, so the figures are the
 * runtime's and the machine's alone); the floor's model activity waits as
 * long.
 *
 *   npm run bench:concurrency -- [--sessions 50] [--turns 2] [--steps 5] [--single-turns 10] [--kill-at 0.5] [--model-ms 0]
 */
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { bundleWorkflowCode } from '@temporalio/worker';
import { WORKFLOWS_PATH, stackTracesFromEnv, workflowBundlerOptions } from '../workers/workflow-bundle';
import { MongoClient } from 'mongodb';
import { AgentClient } from '../client/agent-client';
import { dataConverterFor } from '../codec/data-converter';
import { ensureStack, stackStatus } from '../scripts/stack';
import { loadConfig } from '../workers/config';
import { killHard, startChild, stopChild } from './support/child-process';
import { measureCachedHeap } from './support/cache-probe';
import { CpuMeter } from './support/cpu-meter';
import { cpuPerStep, phaseFigures, printConcurrencyReport } from './support/concurrency-report';
import { runBatch } from './support/concurrent-sessions';
import { intOption } from './support/int-option';
import { RssSampler } from './support/rss-sampler';
import { SessionContender } from './support/session-contender';
import { median, percentile, round } from './support/stats';

const TARGET_PEAK_RSS_MB = 600;
const TARGET_P95_RATIO = 3;
const TURN_TIMEOUT_MS = 120_000;
/** The longest --model-ms: the floor's model activity must end within its 10 s timeout, waits included. */
const MAX_MODEL_MS = 5_000;
/**
 * The bench's own database: on FerretDB each database is its own SQLite file,
 * so a run does not queue behind the writes of tests sharing the stack, nor
 * they behind its.
 */
const DATABASE = 'bench_concurrency';

function options() {
  const { values } = parseArgs({
    options: {
      sessions: { type: 'string', default: '50' },
      turns: { type: 'string', default: '2' },
      steps: { type: 'string', default: '5' },
      'single-turns': { type: 'string', default: '10' },
      'kill-at': { type: 'string', default: '0.5' },
      'model-ms': { type: 'string', default: '0' },
    },
  });
  const killAt = Number(values['kill-at']);
  if (!(killAt > 0 && killAt < 1)) throw new Error(`--kill-at must be a fraction between 0 and 1, got ${values['kill-at']}`);
  const steps = intOption('steps', values.steps, 2, 50);
  // Under the floor's activity timeout (floor-workflow.ts), with a turn's waits at most half of its timeout.
  const modelMs = intOption('model-ms', values['model-ms'], 0, MAX_MODEL_MS);
  if (steps * modelMs > TURN_TIMEOUT_MS / 2) {
    throw new Error(`--steps ${steps} x --model-ms ${modelMs} is ${steps * modelMs} ms of model time a turn; keep it at most ${TURN_TIMEOUT_MS / 2} (half the turn timeout)`);
  }
  return {
    sessions: intOption('sessions', values.sessions, 1, 1_000),
    turns: intOption('turns', values.turns, 1, 100),
    steps,
    singleTurns: intOption('single-turns', values['single-turns'], 2, 1_000),
    killAt,
    modelMs,
  };
}

const log = (line: string): void => void process.stderr.write(`${line}\n`);
const out = (line: string): void => void process.stdout.write(`${line}\n`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Everything the benchmark starts, stopped at the end whatever happened. */
interface Started {
  children: ChildProcess[];
  samplers: RssSampler[];
  agent?: AgentClient;
  bundlePath?: string;
}

async function main(started: Started): Promise<void> {
  const opts = options();
  const stack = await ensureStack({ log: (line) => log(`[stack] ${line}`) });
  const id = randomUUID().slice(0, 8);

  // One bundle for every worker process, as a deployment ships it (WORKFLOW_BUNDLE_PATH): no worker pays for webpack.
  const dir = join(process.env.DURABLE_AGENT_DATA_DIR ?? join(process.cwd(), '.data'), 'bench');
  mkdirSync(dir, { recursive: true });
  started.bundlePath = join(dir, `workflow-bundle-${id}.js`);
  log('[bench] bundling the workflow code');
  const bundle = await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, ...workflowBundlerOptions(stackTracesFromEnv()), logger: quietLogger });
  writeFileSync(started.bundlePath, bundle.code);

  const model = await startChild('bench-model-process.ts', {
    args: [String(opts.steps - 1), String(opts.modelMs)],
    ready: /^model http/,
    label: 'model',
    track: started.children,
  });
  const baseUrl = model.readyLine.replace(/^model /, '').trim();
  const workerEnv: NodeJS.ProcessEnv = {
    ...process.env,
    TEMPORAL_ADDRESS: stack.temporalAddress,
    TEMPORAL_NAMESPACE: stack.temporalNamespace,
    MONGODB_URI: stack.mongoUri,
    MONGODB_DATABASE: DATABASE,
    TEMPORAL_TASK_QUEUE: `bench-concurrency-${id}`,
    OPENAI_BASE_URL: baseUrl,
    OPENAI_API_KEY: 'bench',
    MODEL_NAME: 'bench',
    MAINTENANCE_EVERY_MS: '0',
    WORKFLOW_BUNDLE_PATH: started.bundlePath,
    // As `npm run worker` starts a worker (package.json; docs/scale-out.md, "Peak RSS").
    MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX || '2',
    NODE_OPTIONS: `--max-old-space-size=${process.env.WORKER_HEAP_MB || '512'} ${process.env.NODE_OPTIONS ?? ''}`.trim(),
  };
  // Parsed here too: a bad WORKER_* value stops the bench before any process starts, and the report names the tuning.
  const config = loadConfig(workerEnv);
  await emptyDatabase(config.mongodb.uri);
  const startWorker = async (label: string) => {
    const child = await startChild('bench-worker.ts', { nodeArgs: ['--expose-gc'], env: workerEnv, ready: /worker ready/, label, track: started.children });
    const sampler = new RssSampler(child.pid);
    started.samplers.push(sampler);
    return { ...child, sampler };
  };

  log(`[bench] starting worker 1 on ${config.temporal.address}, task queue ${config.temporal.taskQueue}`);
  const first = await startWorker('worker 1');
  await sleep(2_000);
  const idleRssMb = (await first.sampler.nowMb()) ?? Number.NaN;
  const { address, namespace, taskQueue } = config.temporal;
  const agent = await AgentClient.connect({ address, namespace, taskQueue, dataConverter: dataConverterFor(config.encryption), principal: { tenant: 'bench', user: 'loop' } });
  started.agent = agent;

  // CPU time of every process on a step's path, to tell "the worker is slow" from "the machine is full".
  const servers = (await stackStatus()).components.filter((c) => c.pid !== null).map((c) => [c.name, c.pid as number] as const);
  const pids = new Map<string, number>([['worker', first.pid], ...servers, ['model', model.pid], ['bench', process.pid]]);

  // Baseline: one session at a time on the same worker, after a warm-up turn.
  log(`[bench] single session: ${opts.singleTurns} turn(s) of ${opts.steps} steps, one at a time`);
  const single = new SessionContender(agent, `conc-${id}-single`, opts.steps, opts.turns);
  await single.turn('warm-up');
  const singleStepMs: number[] = [];
  const singleCpu = new CpuMeter(pids);
  await singleCpu.start();
  for (let i = 0; i < opts.singleTurns; i++) singleStepMs.push((await single.turn(`single ${i + 1}`)) / opts.steps);
  const singleCpuMs = await singleCpu.used();
  await single.endAll();
  const singleMedian = median(singleStepMs);
  const warmRssMb = (await first.sampler.nowMb()) ?? Number.NaN;

  const shape = { sessions: opts.sessions, turns: opts.turns, steps: opts.steps, turnTimeoutMs: TURN_TIMEOUT_MS };
  const totalTurns = opts.sessions * opts.turns;
  log(`[bench] phase 1: ${opts.sessions} sessions x ${opts.turns} turn(s) x ${opts.steps} steps at once on one worker`);
  first.sampler.resetPeak();
  const oneCpu = new CpuMeter(pids);
  await oneCpu.start();
  const one = await runBatch(agent, `conc-${id}-one`, shape, { onTurn: progress('phase 1', totalTurns) });
  const onePeakMb = await first.sampler.peakMb();
  const oneCpuMs = await oneCpu.used();

  log(`[bench] phase 2: the same on two workers; worker 2 is SIGKILLed after ${Math.round(opts.killAt * 100)}% of the turns`);
  const second = await startWorker('worker 2');
  first.sampler.resetPeak();
  let killedAfter = 0;
  let kill: Promise<void> | undefined;
  const twoCpu = new CpuMeter(new Map([...pids, ['worker 2', second.pid]]));
  await twoCpu.start();
  const report = progress('phase 2', totalTurns);
  const two = await runBatch(agent, `conc-${id}-two`, shape, {
    onTurn: (done) => {
      report(done);
      if (kill || done < opts.killAt * totalTurns) return;
      killedAfter = done;
      log(`[bench] SIGKILL worker 2 (pid ${second.pid}) after ${done} of ${totalTurns} turns`);
      kill = Promise.all([second.sampler.peakMb(), twoCpu.read()]).then(() => killHard(second.proc));
    },
  });
  await kill;
  const twoPeakMb = Math.max(await first.sampler.peakMb(), await second.sampler.peakMb());
  const twoCpuMs = await twoCpu.used();
  const cache = await measureCachedHeap({ ...workerEnv, TEMPORAL_TASK_QUEUE: `${taskQueue}-cache` }, config, shape, `conc-${id}-cache`, started.children);
  // A baseline that fails is reported as missing, never at the cost of the figures above.
  const floor = await measureFloor(agent, { address, namespace, taskQueue: `${taskQueue}-floor` }, workerEnv, shape, opts.singleTurns, opts.modelMs, started.children).catch((err: unknown) => {
    log(`[bench] the floor was not measured: ${err instanceof Error ? err.message : String(err)}`);
    return null;
  });
  const singleSteps = opts.singleTurns * opts.steps;
  const batchSteps = totalTurns * opts.steps;
  const singleCpuPerStep = cpuPerStep(singleCpuMs, singleSteps);
  const singleCpuTotal = Object.values(singleCpuPerStep).reduce((a, b) => a + b, 0);

  const figures = {
    ...phaseFigures(one, opts.steps, singleMedian),
    single_step_ms_median: round(singleMedian),
    peak_rss_mb: round(onePeakMb, 1),
    idle_rss_mb: round(idleRssMb, 1),
    warm_rss_mb: round(warmRssMb, 1),
    rss_per_cached_session_mb: round((onePeakMb - idleRssMb) / opts.sessions),
    heap_cached_mb: round(cache.cachedMb, 1),
    heap_empty_mb: round(cache.emptyMb, 1),
    heap_per_cached_session_mb: round((cache.cachedMb - cache.emptyMb) / opts.sessions, 3),
    sessions: opts.sessions,
    turns_per_session: opts.turns,
    steps_per_turn: opts.steps,
    model_ms: opts.modelMs,
    wall_s: round(one.wallMs / 1000, 1),
    cores: availableParallelism(),
    single_cpu_ms_per_step: singleCpuPerStep,
    cpu_ms_per_step: cpuPerStep(oneCpuMs, batchSteps),
    // Every session's step needs the machine's CPU for `singleCpuTotal` ms: with all of them waiting, no tuning beats this median.
    // With a model that takes time, the sessions wait on it side by side and the single session's CPU counts the servers'
    // idle polling through each wait: no such bound follows.
    cpu_bound_step_ms: opts.modelMs > 0 ? null : round((opts.sessions * singleCpuTotal) / availableParallelism()),
    kill: {
      ...phaseFigures(two, opts.steps, singleMedian),
      peak_rss_mb: round(twoPeakMb, 1),
      workers: 2,
      killed_after_turns: killedAfter,
      turn_ms_max: round(Math.max(...two.turnMs)),
      wall_s: round(two.wallMs / 1000, 1),
      cpu_ms_per_step: cpuPerStep(twoCpuMs, batchSteps),
    },
    tuning: config.worker,
    floor,
  };
  const met = {
    failures: figures.failures === 0 && figures.kill.failures === 0,
    // A turn counts as kept only when its session's stream proved it.
    lost_turns: figures.lost_turns + figures.unverified_turns + figures.kill.lost_turns + figures.kill.unverified_turns === 0,
    peak_rss: figures.peak_rss_mb <= TARGET_PEAK_RSS_MB && figures.kill.peak_rss_mb <= TARGET_PEAK_RSS_MB,
    p95_ratio: figures.p95_ratio <= TARGET_P95_RATIO,
  };
  printConcurrencyReport(figures, [['one worker', one], ['two workers', two]], out);
  const verdict = (ok: boolean): string => (ok ? 'met' : 'NOT met');
  out(
    `targets: 0 failures ${verdict(met.failures)}, 0 lost turns ${verdict(met.lost_turns)}, peak RSS <= ${TARGET_PEAK_RSS_MB} MB ${verdict(met.peak_rss)}, ` +
      `one-worker step p95 <= ${TARGET_P95_RATIO}x the single-session median ${verdict(met.p95_ratio)} ` +
      (floor ? `(the bare floor ${opts.sessions} at once: p95 ${floor.p95_ratio}x its own single median)` : '(the bare floor: not measured)'),
  );
  out(JSON.stringify({ ...figures, targets_met: Object.values(met).every(Boolean) }));
}

/**
 * The baseline for the p95 target: the bare Temporal workflow of the
 * session's shape (bench/support/floor-workflow.ts: the model call a no-op
 * activity, each tool call a no-op local activity) on a worker process of its
 * own, first one turn at a time, then as many at once as the sessions ran,
 * timed the same way (a turn's time over its steps). What it cannot do at
 * that concurrency on this machine, no session can.
 */
async function measureFloor(
  agent: AgentClient,
  where: { address: string; namespace: string; taskQueue: string },
  env: NodeJS.ProcessEnv,
  shape: { sessions: number; turns: number; steps: number; turnTimeoutMs: number },
  singleTurns: number,
  modelMs: number,
  children: ChildProcess[],
) {
  log(`[bench] the floor: the bare workflow of the same shape, one at a time, then ${shape.sessions} x ${shape.turns} turn(s) at once, on a worker process of its own`);
  const worker = await startChild('floor-worker.ts', { args: [where.address, where.namespace, where.taskQueue], env, ready: /worker ready/, label: 'floor worker', track: children });
  let n = 0;
  const turn = async (): Promise<number> => {
    const started = performance.now();
    await agent.client.workflow.execute('floorTurn', { taskQueue: where.taskQueue, workflowId: `${where.taskQueue}-${++n}`, args: modelMs > 0 ? [shape.steps, modelMs] : [shape.steps], workflowExecutionTimeout: shape.turnTimeoutMs });
    return (performance.now() - started) / shape.steps;
  };
  try {
    await turn();
    const single: number[] = [];
    for (let i = 0; i < singleTurns; i++) single.push(await turn());
    const concurrent: number[] = [];
    const started = performance.now();
    await Promise.all(
      Array.from({ length: shape.sessions }, async () => {
        for (let t = 0; t < shape.turns; t++) concurrent.push(await turn());
      }),
    );
    const wallMs = performance.now() - started;
    const singleMedian = median(single);
    return {
      single_step_ms_median: round(singleMedian),
      step_ms_p50: round(median(concurrent)),
      step_ms_p95: round(percentile(concurrent, 95)),
      p95_ratio: round(percentile(concurrent, 95) / singleMedian),
      steps_per_s: round((concurrent.length * shape.steps) / (wallMs / 1000), 1),
    };
  } finally {
    await killHard(worker.proc);
  }
}

/**
 * Empties the bench's database, so every run starts from the same size
 * (FerretDB scans a collection for `$in` on `_id`: what earlier runs left
 * slows this one). Emptied, never dropped: FerretDB died once of a SIGBUS in
 * SQLite's WAL index when a database was dropped under a request still
 * running on it, taking the shared stack down.
 */
async function emptyDatabase(uri: string): Promise<void> {
  const mongo = await new MongoClient(uri, { serverSelectionTimeoutMS: 5_000 }).connect();
  try {
    const db = mongo.db(DATABASE);
    for (const { name } of await db.listCollections({}, { nameOnly: true }).toArray()) await db.collection(name).deleteMany({});
  } finally {
    await mongo.close();
  }
}

/** Logs progress at each tenth of the turns. */
function progress(phase: string, total: number): (done: number) => void {
  let next = 0.1;
  return (done) => {
    if (done / total + 1e-9 < next) return;
    log(`[bench] ${phase}: ${done}/${total} turns`);
    next = Math.floor((done / total) * 10 + 1) / 10;
  };
}

async function shutdown(started: Started): Promise<void> {
  for (const sampler of started.samplers) sampler.stop();
  await started.agent?.client.connection.close().catch(() => undefined);
  await Promise.all(started.children.map((child) => stopChild(child)));
  if (started.bundlePath) rmSync(started.bundlePath, { force: true });
}

const noop = () => undefined;
const quietLogger = { trace: noop, debug: noop, info: noop, warn: noop, error: (m: string) => log(m), log: noop };

const started: Started = { children: [], samplers: [] };
main(started)
  .finally(() => shutdown(started))
  .then(
    () => process.exit(0),
    (err: unknown) => {
      process.stderr.write(`bench:concurrency failed: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    },
  );
