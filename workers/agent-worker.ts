import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import { MongoClient } from 'mongodb';
import OpenAI from 'openai';
import { createActivities, type ActivityDeps } from '../activities/create-activities';
import { ensureMeetingIndexes } from '../activities/tools/meeting-tools';
import type { RuntimeConfig } from './config';

export interface AgentWorkerHandle {
  worker: Worker;
  /** Runs until shutdown; resolves when the worker has drained. */
  run(): Promise<void>;
  /** Stops polling, waits for in-flight tasks, closes connections. */
  shutdown(): Promise<void>;
}

export interface AgentWorkerOverrides {
  /** A prebuilt workflow bundle (tests build it once). */
  workflowBundlePath?: string;
  extraTools?: ActivityDeps['extraTools'];
  toolSource?: ActivityDeps['toolSource'];
  workerOptions?: Partial<WorkerOptions>;
}

/** Connects every dependency named in the config and creates a worker for the session workflow. */
export async function createAgentWorker(config: RuntimeConfig, overrides: AgentWorkerOverrides = {}): Promise<AgentWorkerHandle> {
  const mongo = new MongoClient(config.mongodb.uri, { serverSelectionTimeoutMS: 10_000 });
  await mongo.connect();
  const db = mongo.db(config.mongodb.database);
  await ensureMeetingIndexes(db);
  const openai = new OpenAI({
    baseURL: config.model.baseUrl,
    // Local OpenAI-compatible servers often need no key; the SDK insists on a string.
    apiKey: config.model.apiKey ?? 'not-needed',
    timeout: config.model.requestTimeoutMs,
    maxRetries: 0,
  });
  const connection = await NativeConnection.connect({ address: config.temporal.address });
  const activities = createActivities({
    db,
    openai,
    model: { name: config.model.name },
    limits: config.limits,
    extraTools: overrides.extraTools,
    toolSource: overrides.toolSource,
  });
  const worker = await Worker.create({
    connection,
    namespace: config.temporal.namespace,
    taskQueue: config.temporal.taskQueue,
    ...(overrides.workflowBundlePath
      ? { workflowBundle: { codePath: overrides.workflowBundlePath } }
      : { workflowsPath: require.resolve('../workflows') }),
    activities,
    // Cancellation reaches an activity only in a heartbeat response; flushing heartbeats
    // often keeps an interrupt's latency to a fraction of a second.
    maxHeartbeatThrottleInterval: '250 milliseconds',
    defaultHeartbeatThrottleInterval: '250 milliseconds',
    ...overrides.workerOptions,
  });
  let running: Promise<void> | null = null;
  const close = async () => {
    await connection.close().catch(() => undefined);
    await mongo.close().catch(() => undefined);
  };
  return {
    worker,
    run() {
      running ??= worker.run().finally(close);
      return running;
    },
    async shutdown() {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      if (running) await running;
      else await close();
    },
  };
}
