import { MongoClient } from 'mongodb';
import { createAgentWorker } from '../../workers/agent-worker';
import { loadConfig } from '../../workers/config';
import { sideEffectTool } from './side-effect-tool';

/** A worker in its own process, so a test can SIGKILL it mid-activity. */
async function main(): Promise<void> {
  const config = loadConfig();
  const mongo = await new MongoClient(config.mongodb.uri).connect();
  const handle = await createAgentWorker(config, {
    workflowBundlePath: process.env.WORKFLOW_BUNDLE_PATH,
    extraTools: [sideEffectTool(mongo.db(config.mongodb.database))],
  });
  process.stdout.write('worker ready\n');
  await handle.run();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
