import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { History } from '@temporalio/common/lib/proto-utils';
import { bundleWorkflowCode } from '@temporalio/worker';
import { ensureStack } from '../../scripts/stack';
import { stdioReportServer, tempDir, writeMcpConfig } from '../support/mcp-servers';
import { probeTools, type ProbeLog } from '../support/probe-tools';
import { sessionOptions, startTestEnv, uniqueId, type TestEnv } from '../support/test-env';
import { workflowIdFor } from '../../workflows/messages';
import { HISTORIES_DIR, hasWorkflowTaskFailure } from './corpus';
import { historyToJson } from './history-json';
import type { Scenario, ScenarioContext } from './scenario';

export const SCENARIOS_DIR = resolve(__dirname, 'scenarios');

/** How long a session may take to finish after `endSession` (or on its own). */
const FINISH_TIMEOUT_MS = 30_000;

/**
 * Brings the local stack up (reusing a running one) and bundles the workflow
 * code once, as jest's global setup does, but into a bundle file of its own:
 * a recording must not swap the bundle under a test run going on beside it.
 */
export async function prepareStack(): Promise<{ bundlePath: string }> {
  const info = await ensureStack({ log: (line: string) => process.stderr.write(`[stack] ${line}\n`) });
  process.env.TEMPORAL_ADDRESS = info.temporalAddress;
  process.env.TEMPORAL_NAMESPACE = info.temporalNamespace;
  process.env.MONGODB_URI = info.mongoUri;
  const dir = resolve(process.env.DURABLE_AGENT_DATA_DIR ?? join(process.cwd(), '.data'), 'replay-record');
  mkdirSync(dir, { recursive: true });
  const noop = () => undefined;
  const logger = { trace: noop, debug: noop, info: noop, warn: noop, error: (m: string) => process.stderr.write(`${m}\n`), log: noop };
  const bundle = await bundleWorkflowCode({ workflowsPath: require.resolve('../../workflows'), logger });
  const codePath = join(dir, `workflow-bundle-${process.pid}.js`);
  writeFileSync(codePath, bundle.code);
  process.env.WORKFLOW_BUNDLE_PATH = codePath;
  return { bundlePath: codePath };
}

/** Every scenario in `test/replay/scenarios/`, sorted by name; a file default-exports one scenario or an array. */
export async function loadScenarios(dir = SCENARIOS_DIR): Promise<Scenario[]> {
  const all: Scenario[] = [];
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.ts')).sort()) {
    const loaded = ((await import(join(dir, file))) as { default?: Scenario | Scenario[] }).default;
    if (!loaded) throw new Error(`${file} has no default export: export default defineScenario({ ... })`);
    all.push(...(Array.isArray(loaded) ? loaded : [loaded]));
  }
  const seen = new Set<string>();
  for (const s of all) {
    if (seen.has(s.name)) throw new Error(`two scenarios are named "${s.name}"`);
    seen.add(s.name);
  }
  return all.sort((a, b) => a.name.localeCompare(b.name));
}

export interface RecordResult {
  name: string;
  ok: boolean;
  path?: string;
  events?: number;
  ms: number;
  error?: string;
}

function closedNormally(history: History): boolean {
  const last = history.events?.at(-1);
  return Boolean(last?.workflowExecutionCompletedEventAttributes || last?.workflowExecutionContinuedAsNewEventAttributes);
}

async function waitUntilClosed(env: TestEnv, workflowId: string, runId: string): Promise<void> {
  const handle = env.client.workflow.getHandle(workflowId, runId);
  const deadline = Date.now() + FINISH_TIMEOUT_MS;
  while ((await handle.describe()).status.name === 'RUNNING') {
    if (Date.now() > deadline) throw new Error(`${workflowId} run ${runId} still runs ${FINISH_TIMEOUT_MS} ms after the scenario`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Runs one scenario against the real stack and writes its session's history to `outDir/<name>.json`. */
export async function recordScenario(scenario: Scenario, outDir = HISTORIES_DIR): Promise<RecordResult> {
  const started = Date.now();
  const log = (message: string) => process.stderr.write(`[${scenario.name}] ${message}\n`);
  const probe: ProbeLog = { runs: [] };
  let mcpEventsPath: string | undefined;
  // Recorded histories stay plain JSON, readable in review and replayed without the codec
  // (decoding passes plain payloads through, so an encrypting worker replays them too).
  // Scenarios seed memories with the fixtures' word-hashing vectors; the worker embeds queries the same way.
  const configEnv: Record<string, string> = { PAYLOAD_ENCRYPTION_KEYS: '', EMBEDDING_MODEL: 'offline-hash' };
  if (scenario.env?.mcp || scenario.env?.mcpServers) {
    const dir = tempDir(`replay-${scenario.name}`);
    mcpEventsPath = join(dir, 'events.jsonl');
    configEnv.MCP_CONFIG_PATH = writeMcpConfig(dir, { ...(scenario.env.mcp ? { report: stdioReportServer(mcpEventsPath) } : {}), ...scenario.env.mcpServers });
  }
  let env: TestEnv | undefined;
  try {
    env = await startTestEnv({
      name: scenario.name.slice(0, 24),
      extraTools: [...(scenario.env?.probeTools ? probeTools(probe) : []), ...(scenario.env?.extraTools ?? [])],
      configEnv,
      modelFallback: scenario.env?.modelFallback,
      ...(scenario.env?.budgets ? { budgets: scenario.env.budgets } : {}),
      ...(scenario.env?.activityInterceptors ? { workerOptions: { interceptors: { activity: scenario.env.activityInterceptors } } } : {}),
    });
    const sessionId = uniqueId(`replay-${scenario.name}`).slice(0, 120);
    let runId: string | undefined;
    const ctx: ScenarioContext = {
      env,
      sessionId,
      options: (extra = {}) => sessionOptions(sessionId, { ...scenario.session, ...extra }),
      probe,
      mcpEventsPath,
      recordRun: (id) => {
        runId = id;
      },
      check(condition, message) {
        if (!condition) throw new Error(`check failed: ${message}`);
      },
      log,
    };
    await scenario.run(ctx);

    const workflowId = workflowIdFor(sessionId);
    const target = env.client.workflow.getHandle(workflowId, runId);
    const described = await target.describe();
    if (described.status.name === 'RUNNING') {
      if (scenario.endSession === false) throw new Error(`the recorded run ${described.runId} is still running, and the scenario says it ends on its own`);
      await env.agent.end(sessionId, 'recording done');
    }
    await waitUntilClosed(env, workflowId, described.runId);
    const history = await env.client.workflow.getHandle(workflowId, described.runId).fetchHistory();
    if (hasWorkflowTaskFailure(history)) throw new Error(`the history of ${workflowId} holds a WorkflowTaskFailed event`);
    if (!closedNormally(history)) throw new Error(`${workflowId} did not complete or continue as new`);
    env.model.assertDone();

    mkdirSync(outDir, { recursive: true });
    const path = join(outDir, `${scenario.name}.json`);
    writeFileSync(path, `${historyToJson(history)}\n`);
    const events = history.events?.length ?? 0;
    log(`recorded ${events} events in ${Date.now() - started} ms`);
    return { name: scenario.name, ok: true, path, events, ms: Date.now() - started };
  } catch (err) {
    const error = err instanceof Error ? err.message : String(err);
    if (process.env.REPLAY_RECORD_DEBUG) process.stderr.write(`${err instanceof Error ? err.stack : error}\n`);
    log(`FAILED: ${error}`);
    return { name: scenario.name, ok: false, ms: Date.now() - started, error };
  } finally {
    await env?.close().catch(() => undefined);
  }
}

/** Records scenarios, `concurrency` at a time; each runs in its own environment, so they do not interfere. */
export async function recordScenarios(scenarios: Scenario[], options: { concurrency?: number; outDir?: string } = {}): Promise<RecordResult[]> {
  const results: RecordResult[] = [];
  const queue = [...scenarios];
  const lanes = Array.from({ length: Math.max(1, options.concurrency ?? 3) }, async () => {
    for (let next = queue.shift(); next; next = queue.shift()) results.push(await recordScenario(next, options.outDir));
  });
  await Promise.all(lanes);
  return results.sort((a, b) => a.name.localeCompare(b.name));
}

function parseArgs(argv: string[]): { names: string[]; concurrency: number; list: boolean } {
  const names: string[] = [];
  let concurrency = 3;
  let list = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--list') list = true;
    else if (arg === '--concurrency') concurrency = Number(argv[++i]);
    else if (arg.startsWith('--concurrency=')) concurrency = Number(arg.slice('--concurrency='.length));
    else if (arg.startsWith('-')) throw new Error(`unknown option ${arg}; usage: npm run replay:record -- [--list] [--concurrency N] [scenario ...]`);
    else names.push(arg);
  }
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new Error('--concurrency takes a positive integer');
  return { names, concurrency, list };
}

async function main(): Promise<number> {
  const args = parseArgs(process.argv.slice(2));
  const all = await loadScenarios();
  if (args.list) {
    for (const s of all) process.stdout.write(`${s.name.padEnd(32)} ${s.description}\n`);
    return 0;
  }
  const unknown = args.names.filter((n) => !all.some((s) => s.name === n));
  if (unknown.length) throw new Error(`no scenario named ${unknown.join(', ')}; see npm run replay:record -- --list`);
  const chosen = args.names.length ? all.filter((s) => args.names.includes(s.name)) : all;
  const { bundlePath } = await prepareStack();
  const started = Date.now();
  const results = await recordScenarios(chosen, { concurrency: args.concurrency }).finally(() => rmSync(bundlePath, { force: true }));
  const failed = results.filter((r) => !r.ok);
  if (!args.names.length) {
    // `<scenario>--<note>.json` is a kept older recording (say, from before a patch), not a stale one.
    const stale = readdirSync(HISTORIES_DIR).filter((f) => f.endsWith('.json') && !all.some((s) => f === `${s.name}.json` || f.startsWith(`${s.name}--`)));
    if (stale.length) process.stderr.write(`histories without a scenario (delete them or add the scenario back): ${stale.join(', ')}\n`);
  }
  process.stdout.write(
    `${JSON.stringify({ recorded: results.length - failed.length, failed: failed.map((f) => ({ name: f.name, error: f.error })), seconds: Math.round((Date.now() - started) / 100) / 10 })}\n`,
  );
  return failed.length ? 1 : 0;
}

if (require.main === module) {
  main().then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    },
  );
}
