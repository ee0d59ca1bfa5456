/**
 * `npm run bench:loop`: what durability costs per ReAct step.
 *
 * The same scripted conversation runs side by side in one process: by a
 * plain in-process loop (openai SDK + a direct function call) and by the
 * session workflow (AgentClient -> Temporal -> worker activities). The model
 * answers at once from a process of its own (sharing a Node thread with the
 * worker would hide or invert some levers) and the tool does nothing, so the
 * difference per step is the runtime's own overhead. A bare Temporal
 * workflow making the same activity round trips runs beside them: the floor
 * any session can reach on this server. `floor_ratio` (session step median
 * over floor step median) is the target, as load moves it far less than an
 * absolute time; `history_bytes_per_step` is what a step writes to history.
 * The last line printed is one JSON object; `floor_ratio_ci95` is a 95%
 * bootstrap interval over the measured turns. 120 turns by default: five
 * runs of the same code at 40 turns gave `floor_ratio` 1.14 to 1.27
 * (docs/performance.md).
 *
 *   npm run bench:loop -- [--turns 120] [--steps 5] [--warmup 5] [--turns-per-session 10] [--legs]
 *
 * `--legs` also times each leg of a step, session and floor alike
 * (support/core-legs.ts), and reports the medians as `legs_ms`.
 */
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import OpenAI from 'openai';
import type { ChatCompletionTool } from 'openai/resources/chat/completions';
import { AgentClient } from '../client/agent-client';
import { ensureStack, stackStatus } from '../scripts/stack';
import { CpuMeter } from './support/cpu-meter';
import type { ChildProcess } from 'node:child_process';
import { createAgentWorker, type AgentWorkerHandle } from '../workers/agent-worker';
import { loadConfig } from '../workers/config';
import { dataConverterFor } from '../codec/data-converter';
import { startChild, stopChild } from './support/child-process';
import { TemporalFloor } from './support/floor';
import { addSessionHistory, emptyBreakdown } from './support/history-breakdown';
import { noopTool } from './support/noop-tool';
import { PlainLoop } from './support/plain-loop';
import { printReport } from './support/report';
import { SessionContender } from './support/session-contender';
import { diffTotals, freePort, scrapeHistograms } from './support/worker-metrics';
import { intOption } from './support/int-option';
import { CoreLegs, legMedians } from './support/core-legs';

const TARGET_MS = 30;

function options() {
  const { values } = parseArgs({
    options: {
      turns: { type: 'string', default: '120' },
      steps: { type: 'string', default: '5' },
      warmup: { type: 'string', default: '5' },
      'turns-per-session': { type: 'string', default: '10' },
      legs: { type: 'boolean', default: false },
    },
  });
  return {
    turns: intOption('turns', values.turns, 1, 10_000),
    steps: intOption('steps', values.steps, 2, 50),
    warmup: intOption('warmup', values.warmup, 1, 1_000),
    turnsPerSession: intOption('turns-per-session', values['turns-per-session'], 1, 1_000),
    legs: values.legs === true,
  };
}

const log = (line: string): void => void process.stderr.write(`${line}\n`);

/** Everything the benchmark starts, stopped in reverse order. */
interface Started {
  model?: ChildProcess;
  worker?: AgentWorkerHandle;
  agent?: AgentClient;
  sessions?: SessionContender;
  floor?: TemporalFloor;
}

async function main(started: Started): Promise<void> {
  const opts = options();
  const metricsPort = await freePort();
  Runtime.install({
    logger: new DefaultLogger('WARN'),
    telemetryOptions: { metrics: { prometheus: { bindAddress: `127.0.0.1:${metricsPort}` } } },
  });
  const legs = opts.legs ? new CoreLegs() : undefined;
  legs?.install();
  const stack = await ensureStack({ log: (line) => log(`[stack] ${line}`) });
  const id = randomUUID().slice(0, 8);
  const modelChild = await startChild('bench-model-process.ts', { args: [String(opts.steps - 1)], ready: /^model /, label: 'model' });
  started.model = modelChild.proc;
  const model = { baseUrl: modelChild.readyLine.slice('model '.length).trim() };
  const firstRequest = new Promise<string>((resolve) => {
    let out = '';
    modelChild.proc.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      const line = out.split('\n').find((l) => l.startsWith('first-request '));
      if (line) resolve(line.slice('first-request '.length));
    });
  });
  const config = loadConfig({
    ...process.env,
    TEMPORAL_ADDRESS: stack.temporalAddress,
    TEMPORAL_NAMESPACE: stack.temporalNamespace,
    MONGODB_URI: stack.mongoUri,
    TEMPORAL_TASK_QUEUE: `bench-loop-${id}`,
    // No maintenance schedule: it would fire on this run's task queue, which no worker polls once the bench ends.
    MAINTENANCE_EVERY_MS: '0',
    OPENAI_BASE_URL: model.baseUrl,
    OPENAI_API_KEY: 'bench',
    MODEL_NAME: 'bench',
  });
  const { address, namespace, taskQueue } = config.temporal;
  log(`[bench] starting workers on ${address} (bundling workflow code takes a few seconds)`);
  const worker = await createAgentWorker(config, { extraTools: [noopTool] });
  started.worker = worker;
  worker.run().catch((err: unknown) => log(`[bench] worker failed: ${String(err)}`));
  const agent = await AgentClient.connect({ address, namespace, taskQueue, dataConverter: dataConverterFor(config.encryption), principal: { tenant: 'bench', user: 'loop' } });
  started.agent = agent;
  const floorQueue = `bench-floor-${id}`;
  const floor = await TemporalFloor.start(agent.client, address, namespace, floorQueue);
  started.floor = floor;
  const sessions = new SessionContender(agent, `bench-${id}`, opts.steps, opts.turnsPerSession);
  started.sessions = sessions;

  // The workflow warms up first: its first model request tells the plain loop what to send.
  log(`[bench] warming up: ${opts.warmup} turn(s) each`);
  for (let i = 0; i < opts.warmup; i++) await sessions.turn(`warm-up ${i + 1}`);
  const first = JSON.parse(await firstRequest) as { messages: Array<{ role: string; content?: unknown }>; tools?: ChatCompletionTool[] } | null;
  const system = first?.messages.find((m) => m.role === 'system')?.content;
  if (typeof system !== 'string' || !first?.tools) throw new Error('could not read the system prompt and tools the workflow sent');
  const openai = new OpenAI({ baseURL: model.baseUrl, apiKey: 'bench', maxRetries: 0 });
  const plain = new PlainLoop(openai, `plain-${id}`, 'bench', system, first.tools, opts.steps);
  for (let i = 0; i < opts.warmup; i++) {
    await plain.turn(`warm-up ${i + 1}`);
    await floor.turn(opts.steps);
  }

  // Measured turns, interleaved and rotating who goes first, so the machine's drift hits all alike.
  await sessions.newSession();
  plain.reset();
  const measured = sessions.all.length - 1;
  const plainMs: number[] = [];
  const workflowMs: number[] = [];
  const floorMs: number[] = [];
  legs?.reset();
  const metricsBefore = await scrapeHistograms(metricsPort, workerMetricsOf(taskQueue, floorQueue));
  // CPU time of every process on a step's path, read around each contender's turns: what a step costs the machine.
  const servers = (await stackStatus()).components.filter((c) => c.pid !== null).map((c) => [c.name, c.pid as number] as const);
  const pids = new Map<string, number>([['bench', process.pid], ...servers, ...(modelChild.proc.pid ? [['model', modelChild.proc.pid] as const] : [])]);
  const cpu = { plain: new Map<string, number>(), session: new Map<string, number>(), floor: new Map<string, number>() };
  const metered = (who: keyof typeof cpu, run: () => Promise<void>) => async () => {
    const meter = new CpuMeter(pids);
    await meter.start();
    await run();
    for (const [name, ms] of await meter.used()) cpu[who].set(name, (cpu[who].get(name) ?? 0) + ms);
  };
  log(`[bench] measuring ${opts.turns} turn(s) of ${opts.steps} steps each (${opts.steps - 1} tool steps + a final answer)`);
  for (let i = 0; i < opts.turns; i++) {
    if (i > 0 && i % opts.turnsPerSession === 0) plain.reset();
    const text = `turn ${i + 1}`;
    const runs = [
      metered('plain', async () => {
        const t0 = performance.now();
        const result = await plain.turn(text);
        plainMs.push(performance.now() - t0);
        if (result.modelCalls !== opts.steps || result.toolCalls !== opts.steps - 1) {
          throw new Error(`plain turn ${i + 1} did not run as scripted: ${JSON.stringify(result)}`);
        }
      }),
      metered('session', async () => {
        workflowMs.push(await sessions.turn(text));
        // Untimed: what the turn's calls still write behind them must not land in the next contender's turn.
        await worker.writesSettled();
      }),
      metered('floor', async () => void floorMs.push(await floor.turn(opts.steps))),
    ];
    for (let j = 0; j < runs.length; j++) await (runs[(i + j) % runs.length] as () => Promise<void>)();
  }
  const workerMetrics = diffTotals(await scrapeHistograms(metricsPort, workerMetricsOf(taskQueue, floorQueue)), metricsBefore);
  if (legs && legs.missed > 0) log(`[bench] --legs: ${legs.missed} moment(s) could not be decoded and were left out`);
  // Histories are read once every measured session has ended and archived: a session still open then would
  // lack its archive's input (about a third of a ten-turn bench session's history), making the figure depend on --turns.
  await sessions.endAll();
  const breakdown = emptyBreakdown();
  for (const sessionId of sessions.all.slice(measured)) await addSessionHistory(agent.client, sessionId, breakdown);
  const sessionsMeasured = sessions.all.length - measured;
  if (breakdown.archives < sessionsMeasured) {
    log(`[bench] ${sessionsMeasured - breakdown.archives} of ${sessionsMeasured} measured sessions did not archive within 20 s (terminated): history_bytes_per_step leaves their archives out`);
  }

  printReport(
    {
      turns: opts.turns,
      stepsPerTurn: opts.steps,
      targetMs: TARGET_MS,
      plainMs,
      workflowMs,
      floorMs,
      breakdown,
      sessionsMeasured,
      workerMetrics,
      cpu,
      ...(legs ? { legs: { session: legMedians(legs.legs(taskQueue)), floor: legMedians(legs.legs(floorQueue)) } } : {}),
    },
    (line) => void report.push(line),
  );
}

/** The report, printed once the worker and sessions are shut down: their late log lines must not follow the JSON line. */
const report: string[] = [];

/** Worker histograms of the session worker and, for comparison, the floor's (one runtime: told apart by task queue). */
function workerMetricsOf(taskQueue: string, floorQueue: string) {
  const where = { task_queue: taskQueue };
  return [
    { name: 'temporal_workflow_task_execution_latency', where },
    { name: 'temporal_workflow_task_schedule_to_start_latency', where },
    { name: 'temporal_activity_execution_latency', by: 'activity_type', where },
    { name: 'temporal_local_activity_execution_latency', by: 'activity_type', where },
    { name: 'temporal_workflow_task_execution_latency', where: { task_queue: floorQueue }, prefix: 'floor: ' },
    { name: 'temporal_workflow_task_schedule_to_start_latency', where: { task_queue: floorQueue }, prefix: 'floor: ' },
  ];
}

async function shutdown(started: Started): Promise<void> {
  await started.sessions?.endAll().catch((err: unknown) => log(`[bench] ending sessions failed: ${String(err)}`));
  await started.floor?.stop();
  await started.worker?.shutdown().catch((err: unknown) => log(`[bench] worker shutdown failed: ${String(err)}`));
  await started.agent?.client.connection.close().catch(() => undefined);
  if (started.model) await stopChild(started.model, 2_000);
}

const started: Started = {};
main(started)
  .finally(() => shutdown(started))
  .then(
    () => {
      // Exit once written: on a pipe, a write still pending at exit is lost.
      process.stdout.write(report.map((line) => `${line}\n`).join(''), () => process.exit(0));
    },
    (err: unknown) => {
      process.stderr.write(`bench:loop failed: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    },
  );
