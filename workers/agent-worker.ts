import { getHeapStatistics } from 'node:v8';
import { Worker, type WorkerOptions } from '@temporalio/worker';
import { DEFAULT_BATCHED_INSERTS } from '../activities/batched-inserts';
import { createModelFetch } from '../activities/model-http';
import { PromptPartResolver, type RunPartsReader } from '../activities/prompt-part-resolver';
import OpenAI from 'openai';
import { builtinTools, createActivities, memoryTools, type ActivityDeps } from '../activities/create-activities';
import { startMcp, type McpLogger, type McpRuntime } from '../activities/mcp';
import { McpOAuth } from '../activities/mcp/mcp-oauth-provider';
import { McpOAuthStore } from '../activities/mcp/mcp-oauth-store';
import { createEmbedder } from '../activities/memory/embedder';
import { LocalEmbedder } from '../activities/memory/local-embedder';
import { RoutedEmbedder } from '../activities/memory/routed-embedder';
import { MemoryRepository } from '../activities/memory/memory-repository';
import { ensureMeetingIndexes } from '../activities/tools/meeting-tools';
import { nativeRunnable } from '../activities/tools/tool-registry';
import { SessionArchiveRepository } from '../activities/session-archive';
import { UsageStore, priceTableFromEnv, type PriceTable } from '../activities/usage/usage-store';
import { budgetsFromEnv, checkCostBudgetsPriced, type Budgets } from '../activities/usage/budgets';
import { dataConverterFor } from '../codec/data-converter';
import { configuredSecrets, type RuntimeConfig } from './config';
import { modelClientLogger } from './redacting-logger';
import { connectMongo, connectTemporal } from './dependencies';
import { ensureMaintenanceSchedule } from './maintenance-schedule';
import { ToolResultStore } from '../activities/tools/tool-result-store';
import { temporalTransportOptions } from './temporal-connection-options';
import { workerTracingOptions, type Tracing } from './tracing';
import { agentSdkWorker } from './sandbox/agent-sdk-worker';
import { heapWarning, workerTuningOptions, type WorkerTuning } from './worker-tuning';
import { applyInterruptBudget } from './v8-tiering';
import { WORKFLOWS_PATH, workflowBundlerOptions } from './workflow-bundle';

export interface AgentWorkerHandle {
  worker: Worker;
  /** The MCP servers' connections, when MCP_CONFIG_PATH is set. */
  mcp?: McpRuntime;
  /** Runs until shutdown; resolves when the worker has drained. */
  run(): Promise<void>;
  /** Stops polling, waits for in-flight tasks, closes connections. */
  shutdown(): Promise<void>;
  /** Writes the usage records queued behind their calls now, and resolves once every such write has landed or failed. */
  writesSettled(): Promise<void>;
}

export interface AgentWorkerOverrides {
  /** A prebuilt workflow bundle (tests build it once). */
  workflowBundlePath?: string;
  extraTools?: ActivityDeps['extraTools'];
  toolSource?: ActivityDeps['toolSource'];
  mcpLogger?: McpLogger;
  workerOptions?: Partial<WorkerOptions>;
  /** Daily budgets (default: BUDGETS from the environment). */
  budgets?: Budgets;
  /** Prices per million tokens (default: MODEL_PRICES from the environment). */
  pricing?: { prices: PriceTable; currency: string };
  /** OpenTelemetry (workers/tracing.ts): adds the interceptors, and bundles the workflows with the workflow-side one. */
  tracing?: Tracing;
  /** Reads a run's prompt parts when this worker lacks one (default: the run's history); tests inject faults here. */
  promptPartsReader?: RunPartsReader;
}

/** How long a stopping worker waits for the writes still behind their calls. */
const WRITES_BEHIND_WAIT_MS = 5_000;

/** The SDK's Worker, or with WORKFLOW_DEADLOCK_CHECK=activation (the default) ours: a watchdog per activation (workers/sandbox/). */
function workerClass(tuning: WorkerTuning): typeof Worker {
  if (tuning.deadlockCheck === 'call') return Worker;
  return agentSdkWorker({ stackTraces: tuning.workflowStackTraces, warn: (message) => console.warn(`[worker] ${message}`) });
}

/** Connects every dependency named in the config and creates a worker for the session workflow. */
export async function createAgentWorker(config: RuntimeConfig, overrides: AgentWorkerOverrides = {}): Promise<AgentWorkerHandle> {
  // Process-wide, before the worker's code runs hot: V8 applies it as each function's budget is next reset.
  applyInterruptBudget(config.worker.v8InterruptBudget);
  // MODEL_HTTP_CLIENT=undici (the default): the SDK's requests go through a keep-alive agent of the worker's own.
  const modelHttp = config.model.httpClient === 'undici' ? createModelFetch() : undefined;
  const openai = new OpenAI({
    ...(modelHttp ? { fetch: modelHttp.fetch } : {}),
    baseURL: config.model.baseUrl,
    // Local OpenAI-compatible servers often need no key; the SDK insists on a string.
    apiKey: config.model.apiKey ?? 'not-needed',
    timeout: config.model.requestTimeoutMs,
    maxRetries: 0,
    logger: modelClientLogger(configuredSecrets(config)),
  });
  const heap = heapWarning(config.worker.maxCachedWorkflows, getHeapStatistics().heap_size_limit);
  if (heap) console.warn(`[worker] ${heap}`);
  const pricing = overrides.pricing ?? priceTableFromEnv(process.env);
  const budgets = overrides.budgets ?? budgetsFromEnv(process.env);
  checkCostBudgetsPriced(budgets, pricing.prices, config.model.name);
  // One embedder per worker, so its recall cache and vector space are shared by every session.
  // Made before any connection: a local model whose files are missing stops the start here, naming the fetch command.
  const memory = {
    embedder: createEmbedder({ openai, embeddingModel: config.model.embeddingModel, dimensions: config.memory.embeddingDims }),
    config: config.memory,
  };
  if (config.memory.enabled && (memory.embedder instanceof LocalEmbedder || memory.embedder instanceof RoutedEmbedder)) {
    // Load the model and run it once while the worker connects and loads its workflows, so the first
    // recall does not pay 0.3 to 0.9 s for it (bench:cold-start's first_turn_ms). A failure here is
    // only logged: the first recall loads again and reports it to its session.
    // One text in each script, so a model of each (the default has two) is loaded and run.
    memory.embedder.embed(['warm up', '预热']).catch((err: unknown) => console.warn(`[memory] loading the embedding model failed: ${err instanceof Error ? err.message : String(err)}`));
  }
  const mongo = await connectMongo(config);
  const db = mongo.db(config.mongodb.database);
  await ensureMeetingIndexes(db);
  await new SessionArchiveRepository(db).ensureIndexes();
  await new MemoryRepository(db).ensureIndexes();
  await new UsageStore(db).ensureIndexes();
  await new ToolResultStore(db).ensureIndexes();
  let mcp: McpRuntime | undefined;
  if (config.mcp.configPath && !overrides.toolSource) {
    // Connections are made once here and shared by every session this worker runs.
    const native = [...builtinTools(db), ...memoryTools(db, memory), ...(overrides.extraTools ?? [])].map((t) => nativeRunnable(t, { timeoutMs: config.limits.toolTimeoutMs }));
    mcp = await startMcp({
      configPath: config.mcp.configPath,
      native,
      connectTimeoutMs: config.mcp.connectTimeoutMs,
      firstConnectTimeoutMs: config.mcp.firstConnectTimeoutMs,
      refreshIntervalMs: config.mcp.refreshIntervalMs,
      defaultTimeoutMs: config.limits.toolTimeoutMs,
      logger: overrides.mcpLogger,
      // Servers that declare `oauth` share one grant per server, kept in MongoDB.
      oauth: new McpOAuth(new McpOAuthStore(db)),
    }).catch(async (err: unknown) => {
      await mongo.close().catch(() => undefined);
      throw err;
    });
  }
  const connection = await connectTemporal(config).catch(async (err: unknown) => {
    await mcp?.close().catch(() => undefined);
    await mongo.close().catch(() => undefined);
    throw err;
  });
  // Usage records are written behind their calls: a worker that stops waits for them.
  // Records within MONGODB_WRITE_BATCH_MS of each other share one insert.
  const batching = { ...DEFAULT_BATCHED_INSERTS, delayMs: config.mongodb.writeBatchMs };
  const stores = { usage: new UsageStore(db, pricing, batching), promptParts: new PromptPartResolver({ readRun: overrides.promptPartsReader }) };
  const activities = createActivities({
    db,
    stores,
    openai,
    model: { name: config.model.name },
    pricing,
    budgets,
    limits: config.limits,
    extraTools: overrides.extraTools,
    toolSource: overrides.toolSource ?? mcp?.toolSource,
    mcpPrompts: mcp?.pool,
    memory,
    secrets: [...configuredSecrets(config), ...(mcp?.pool.config.servers.flatMap((s) => s.secrets) ?? [])],
  });
  const worker = await workerClass(config.worker).create({
    connection,
    namespace: config.temporal.namespace,
    taskQueue: config.temporal.taskQueue,
    // Encrypts every payload when PAYLOAD_ENCRYPTION_KEYS is set; clients must use the same keys.
    dataConverter: dataConverterFor(config.encryption),
    // An update's rejection echoes its input. With the SDK's own check, a 2 MB+ update that the
    // validator rejects fails the workflow task over and over and freezes the session; without it
    // the server drops that one request and the session carries on (test: poison-inputs).
    disablePayloadErrorLimit: true,
    // A prebuilt bundle lacks the tracing interceptors' workflow module: with tracing on, bundle here.
    ...(overrides.workflowBundlePath && !overrides.tracing
      ? { workflowBundle: { codePath: overrides.workflowBundlePath } }
      : { workflowsPath: WORKFLOWS_PATH, bundlerOptions: workflowBundlerOptions(config.worker.workflowStackTraces) }),
    ...(overrides.tracing ? workerTracingOptions(overrides.tracing) : {}),
    activities,
    // Cancellation reaches an activity only in a heartbeat response; flushing heartbeats
    // often keeps an interrupt's latency to a fraction of a second.
    maxHeartbeatThrottleInterval: '250 milliseconds',
    defaultHeartbeatThrottleInterval: '250 milliseconds',
    // Cache size and task slots (or the resource-based tuner) from WORKER_* settings.
    ...workerTuningOptions(config.worker),
    ...overrides.workerOptions,
  });
  if (config.maintenance.scheduleEveryMs > 0) {
    await ensureMaintenanceSchedule({
      address: config.temporal.address,
      namespace: config.temporal.namespace,
      taskQueue: config.temporal.taskQueue,
      everyMs: config.maintenance.scheduleEveryMs,
      dataConverter: dataConverterFor(config.encryption),
      transport: temporalTransportOptions(config.temporal),
    });
  }
  let running: Promise<void> | null = null;
  const writesSettled = (): Promise<void> => stores.usage.settled();
  const close = async () => {
    await connection.close().catch(() => undefined);
    await mcp?.close().catch(() => undefined);
    // The last calls' usage records (cost, budgets), before MongoDB closes; not forever.
    let timer: NodeJS.Timeout | undefined;
    const behind = writesSettled();
    await Promise.race([behind, new Promise((resolve) => (timer = setTimeout(resolve, WRITES_BEHIND_WAIT_MS)))]);
    clearTimeout(timer);
    await mongo.close().catch(() => undefined);
    await modelHttp?.close().catch(() => undefined);
  };
  return {
    worker,
    mcp,
    run() {
      running ??= worker.run().finally(close);
      return running;
    },
    async shutdown() {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      if (running) await running;
      else await close();
    },
    writesSettled,
  };
}
