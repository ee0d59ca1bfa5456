import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { Runtime, DefaultLogger, type WorkerOptions } from '@temporalio/worker';
import { MongoClient, type Db } from 'mongodb';
import { AgentClient, sessionConnectionInterceptors, type SessionEvent } from '../../client';
import { ScriptedModelServer, type ScriptedModelServerOptions } from '../../scripted-model';
import type { McpLogger } from '../../activities/mcp';
import type { NativeTool } from '../../activities/tools/native-tool';
import { createAgentWorker, type AgentWorkerHandle, type AgentWorkerOverrides } from '../../workers/agent-worker';
import { loadConfig, type RuntimeConfig } from '../../workers/config';
import { temporalTransportOptions } from '../../workers/temporal-connection-options';
import { prometheusTelemetry } from '../../workers/telemetry';
import { clientTracingInterceptors, type Tracing } from '../../workers/tracing';
import type { PriceTable } from '../../activities/usage/usage-store';
import type { Budgets } from '../../activities/usage/budgets';
import { freePort } from './net';
import { dataConverterFor } from '../../codec/data-converter';
import type { AgentEvent } from '../../workflows/events';
import type { SessionOptionsInput } from '../../workflows/session-types';

let metricsUrl: Promise<string> | undefined;
/** The runtime of this test process, with a Prometheus endpoint on a free port (metrics are labelled by task queue). */
/** Installs the runtime once per process; environments started at the same time (the replay recorder's) share it. */
function quietRuntime(): Promise<string> {
  metricsUrl ??= (async () => {
    const bind = `127.0.0.1:${await freePort()}`;
    Runtime.install({ logger: new DefaultLogger(process.env.TEST_LOG_LEVEL === 'WARN' ? 'WARN' : 'ERROR'), telemetryOptions: prometheusTelemetry(bind) });
    return `http://${bind}/metrics`;
  })();
  return metricsUrl;
}

export interface TestEnv {
  config: RuntimeConfig;
  model: ScriptedModelServer;
  agent: AgentClient;
  client: Client;
  db: Db;
  taskQueue: string;
  /** The worker process's Prometheus endpoint (Temporal's metrics and ours; filter by `taskQueue`). */
  metricsUrl: string;
  worker: AgentWorkerHandle;
  /** Starts another worker on the same task queue (after a crash, say); `overrides` inject faults into it. */
  startWorker(extraTools?: NativeTool[], overrides?: Pick<AgentWorkerOverrides, 'promptPartsReader'>): Promise<AgentWorkerHandle>;
  close(): Promise<void>;
}

/** A unique id for this test run, safe for task queues, session ids and database names. */
export const uniqueId = (prefix: string): string => `${prefix}-${randomUUID().slice(0, 8)}`;

/**
 * A worker on its own task queue and database, a scripted model on loopback,
 * and a client: the real stack for one test file.
 */
export interface TestEnvOptions {
  name: string;
  extraTools?: NativeTool[];
  startWorker?: boolean;
  /** Extra configuration variables for the worker, e.g. MCP_CONFIG_PATH. */
  configEnv?: Record<string, string>;
  mcpLogger?: McpLogger;
  /** Answers requests no step was scripted for (long scripted sessions). */
  modelFallback?: ScriptedModelServerOptions['fallback'];
  /** Worker options to override (e.g. `maxCachedWorkflows: 0`, which replays every workflow task). */
  workerOptions?: Partial<WorkerOptions>;
  /** OpenTelemetry on the worker and the client (the worker then bundles its workflows itself). */
  tracing?: Tracing;
  /** Model prices for usage and cost. */
  pricing?: { prices: PriceTable; currency: string };
  /** Daily budgets per tenant and user. */
  budgets?: Budgets;
  /** Bundle the workflows at worker start with this env's config, instead of loading the suite's prebuilt bundle. */
  bundleAtStart?: boolean;
}

export async function startTestEnv(options: TestEnvOptions = { name: 'test' }): Promise<TestEnv> {
  const metrics = await quietRuntime();
  const model = await ScriptedModelServer.start(options.modelFallback ? { fallback: options.modelFallback } : {});
  const taskQueue = uniqueId(`tq-${options.name}`);
  const config = loadConfig({
    ...process.env,
    TEMPORAL_TASK_QUEUE: taskQueue,
    OPENAI_BASE_URL: model.baseUrl,
    OPENAI_API_KEY: 'test-key',
    MODEL_NAME: 'scripted',
    MONGODB_DATABASE: uniqueId(`t_${options.name}`).replace(/-/g, '_'),
    // Tests that need the expiry schedule create their own; one per test file would outlive it.
    MAINTENANCE_EVERY_MS: '0',
    ...options.configEnv,
  });
  const mongo = await new MongoClient(config.mongodb.uri).connect();
  const db = mongo.db(config.mongodb.database);
  const workers: AgentWorkerHandle[] = [];
  const startWorker = async (extraTools = options.extraTools, overrides: Pick<AgentWorkerOverrides, 'promptPartsReader'> = {}) => {
    const handle = await createAgentWorker(config, { ...overrides, workflowBundlePath: options.bundleAtStart ? undefined : process.env.WORKFLOW_BUNDLE_PATH, extraTools, mcpLogger: options.mcpLogger, ...(options.workerOptions ? { workerOptions: options.workerOptions } : {}), ...(options.tracing ? { tracing: options.tracing } : {}), ...(options.pricing ? { pricing: options.pricing } : {}), ...(options.budgets ? { budgets: options.budgets } : {}) });
    void handle.run();
    workers.push(handle);
    return handle;
  };
  const worker = options.startWorker === false ? (undefined as unknown as AgentWorkerHandle) : await startWorker();
  // The same transport (TLS, mTLS, API key) the worker uses, from the same settings.
  const connection = await Connection.connect({ address: config.temporal.address, ...temporalTransportOptions(config.temporal), interceptors: sessionConnectionInterceptors() });
  const client = new Client({ connection, namespace: config.temporal.namespace, dataConverter: dataConverterFor(config.encryption), ...(options.tracing ? { interceptors: clientTracingInterceptors() } : {}) });
  // Acts as the user of `sessionOptions` (acme/ana); `agent.as(...)` acts for another.
  const agent = new AgentClient({ client, taskQueue, principal: { tenant: 'acme', user: 'ana' } });
  return {
    config,
    model,
    agent,
    client,
    db,
    taskQueue,
    metricsUrl: metrics,
    worker,
    startWorker,
    async close() {
      await Promise.all(workers.map((w) => w.shutdown().catch(() => undefined)));
      // The client connection is left open (jest exits its process when the run ends): a call of the test
      // that got a retryable status has its next try on the SDK's retry timer, which throws "Channel has
      // been shut down" into the process if the connection is closed first (seen in CI in three files).
      await db.dropDatabase().catch(() => undefined);
      await mongo.close();
      await model.close();
    },
  };
}

/**
 * Session options for tests. Long-term memory is off unless a test turns it
 * on: with it, sessions make extraction calls to the model that tests of
 * other behaviour would have to script.
 */
export function sessionOptions(sessionId: string, extra: Partial<SessionOptionsInput> = {}): SessionOptionsInput {
  return { sessionId, namespace: { tenant: 'acme', user: 'ana' }, memory: { enabled: false }, ...extra };
}

/** Reads events until `until` says stop (inclusive), failing after `timeoutMs`. */
export async function collectEvents(
  agent: AgentClient,
  sessionId: string,
  until: (event: AgentEvent, all: SessionEvent[]) => boolean,
  options: { fromOffset?: number; timeoutMs?: number } = {},
): Promise<SessionEvent[]> {
  const out: SessionEvent[] = [];
  const iterator = agent.events(sessionId, { fromOffset: options.fromOffset });
  const timeoutMs = options.timeoutMs ?? 30_000;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${timeoutMs} ms; got ${out.map((e) => e.event.type).join(', ')}`)), timeoutMs);
  });
  try {
    for (;;) {
      const next = await Promise.race([iterator.next(), timeout]);
      if (next.done) return out;
      out.push(next.value);
      if (until(next.value.event, out)) return out;
    }
  } finally {
    clearTimeout(timer);
    void iterator.return(undefined);
  }
}

export const turnCompleted = (turnId: string) => (e: AgentEvent) => e.type === 'turn_completed' && e.turnId === turnId;

/** Polls `probe` until it returns a truthy value. */
export async function eventually<T>(probe: () => Promise<T> | T, what: string, timeoutMs = 20_000): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await probe();
      if (value) return value as NonNullable<T>;
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
}
