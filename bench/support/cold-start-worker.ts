/**
 * A session worker started as `npm run worker` starts one (createAgentWorker
 * from the environment, WORKFLOW_BUNDLE_PATH honoured), in a process of its
 * own, with each phase of its start timed. When it polls it prints one JSON
 * line, `{"ready":true,...}`; SIGTERM drains it and it exits.
 *
 * The phases are timed by wrapping the calls createAgentWorker makes
 * (MongoDB connect, the MCP pool's start, the Temporal connection,
 * Worker.create, which bundles the workflow code unless a bundle is given);
 * the worker code itself is unchanged. Whatever is left of createAgentWorker
 * is index creation and wiring. After the ready line, every activity call
 * prints its own time.
 */
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { MongoClient } from 'mongodb';
import { McpConnectionPool } from '../../activities/mcp';
import { createAgentWorker } from '../../workers/agent-worker';
import { loadConfig } from '../../workers/config';

const phases: Record<string, number> = {};

function timeCalls(owner: object, method: string, phase: string): void {
  const target = owner as Record<string, (...args: unknown[]) => Promise<unknown>>;
  const original = target[method];
  if (typeof original !== 'function') throw new Error(`cannot time ${method}: not a method`);
  target[method] = async function (this: unknown, ...args: unknown[]) {
    const started = performance.now();
    try {
      return await original.apply(this, args);
    } finally {
      phases[phase] = (phases[phase] ?? 0) + performance.now() - started;
    }
  };
}

type Activity = (...args: unknown[]) => Promise<unknown>;

/**
 * Each activity, local ones included, timed call by call: one JSON line per
 * call on stdout, `{"activity":name,"ms":n}`. Local activities (recall, the
 * tool catalog, read-only tools) leave no timing in history.
 */
function timedActivities(activities: Record<string, Activity>): Record<string, Activity> {
  return Object.fromEntries(
    Object.entries(activities).map(([name, run]) => [
      name,
      async (...args: unknown[]) => {
        const started = performance.now();
        try {
          return await run(...args);
        } finally {
          process.stdout.write(`${JSON.stringify({ activity: name, ms: performance.now() - started })}\n`);
        }
      },
    ]),
  );
}

async function main(): Promise<void> {
  // Node's own start and loading this module's imports: performance.now() counts from process start.
  const modulesMs = performance.now();
  timeCalls(MongoClient.prototype, 'connect', 'mongo_connect_ms');
  timeCalls(McpConnectionPool.prototype, 'start', 'mcp_connect_ms');
  timeCalls(NativeConnection, 'connect', 'temporal_connect_ms');
  // Called on the class it was called on: the agent worker's subclass (workers/sandbox/) must stay the one created.
  const create = Worker.create;
  Worker.create = function (this: typeof Worker, options) {
    return create.call(this, { ...options, activities: timedActivities((options.activities ?? {}) as Record<string, Activity>) });
  };
  timeCalls(Worker, 'create', 'worker_create_ms');
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const started = performance.now();
  const handle = await createAgentWorker(loadConfig(), { workflowBundlePath: process.env.WORKFLOW_BUNDLE_PATH });
  const createMs = performance.now() - started;
  const running = handle.run();
  const timed = Object.values(phases).reduce((sum, ms) => sum + ms, 0);
  process.stdout.write(
    `${JSON.stringify({
      ready: true,
      modules_ms: modulesMs,
      ...phases,
      indexes_and_wiring_ms: createMs - timed,
      create_agent_worker_ms: createMs,
      ready_since_process_start_ms: performance.now(),
      prebuilt_bundle: Boolean(process.env.WORKFLOW_BUNDLE_PATH),
    })}\n`,
  );
  await running;
  process.exit(0);
}

main().catch((err: unknown) => {
  process.stderr.write(`cold-start worker: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
