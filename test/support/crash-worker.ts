import { MongoClient } from 'mongodb';
import { createAgentWorker } from '../../workers/agent-worker';
import { loadConfig } from '../../workers/config';
import { sideEffectTool } from './side-effect-tool';

/**
 * A worker in its own process, so a test can SIGKILL it mid-activity.
 * `TEST_WORKER_IDENTITY` names it in history (default: the SDK's pid@host);
 * `TEST_SLOW_WRITE_HOLD_MS` sets how long `local_slow_write` holds.
 */
async function main(): Promise<void> {
  const config = loadConfig();
  const mongo = await new MongoClient(config.mongodb.uri).connect();
  const identity = process.env.TEST_WORKER_IDENTITY;
  const holdMs = process.env.TEST_SLOW_WRITE_HOLD_MS ? Number(process.env.TEST_SLOW_WRITE_HOLD_MS) : undefined;
  const handle = await createAgentWorker(config, {
    workflowBundlePath: process.env.WORKFLOW_BUNDLE_PATH,
    extraTools: [sideEffectTool(mongo.db(config.mongodb.database), holdMs)],
    ...(identity ? { workerOptions: { identity } } : {}),
  });
  process.stdout.write('worker ready\n');
  await handle.run();
  await mongo.close();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
