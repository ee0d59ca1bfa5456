import { ConfigError, describeConfig, loadConfig } from './config';
import { createAgentWorker } from './agent-worker';

/** Worker process entry point: parse config once, connect, run until SIGINT/SIGTERM. */
async function main(): Promise<void> {
  const config = loadConfig();
  console.log('durable-agent worker starting with', JSON.stringify(describeConfig(config)));
  const handle = await createAgentWorker(config, { workflowBundlePath: process.env.WORKFLOW_BUNDLE_PATH });
  console.log(`durable-agent worker polling task queue "${config.temporal.taskQueue}" on ${config.temporal.address}`);
  await handle.run();
}

main().catch((err) => {
  // McpConfigError and tool-name collisions carry the same type: a person must fix the configuration.
  if (err instanceof ConfigError || (err as { type?: unknown } | null)?.type === 'ConfigInvalid') {
    console.error(err.message);
    process.exit(78);
  }
  console.error(err);
  process.exit(1);
});
