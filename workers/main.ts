import { DefaultLogger, Runtime } from '@temporalio/worker';
import { loadMcpConfig } from '../activities/mcp';
import { SecretRedactor } from '../activities/secret-redactor';
import { ConfigError, configuredSecrets, describeConfig, loadConfig } from './config';
import { createAgentWorker } from './agent-worker';
import { DependencyUnreachableError } from './dependencies';
import { redactingLogger } from './redacting-logger';
import { metricsBindAddress, prometheusTelemetry } from './telemetry';
import { tracingFromEnv } from './tracing';

/** EX_CONFIG and EX_UNAVAILABLE from sysexits.h: a supervisor can tell "fix the config" from "a service is down". */
const EXIT_CONFIG = 78;
const EXIT_UNAVAILABLE = 69;

let redactor = new SecretRedactor([]);

/** Worker process entry point: parse config once, connect, run until SIGINT/SIGTERM. */
async function main(): Promise<void> {
  const config = loadConfig();
  const mcpSecrets = config.mcp.configPath ? loadMcpConfig(config.mcp.configPath).servers.flatMap((s) => s.secrets) : [];
  const secrets = [...configuredSecrets(config), ...mcpSecrets];
  redactor = new SecretRedactor(secrets);
  // Installed before any connection exists: the SDK logs failures with their errors, which may echo a secret.
  const metrics = metricsBindAddress(process.env);
  Runtime.install({ logger: redactingLogger(new DefaultLogger('INFO'), secrets), ...(metrics ? { telemetryOptions: prometheusTelemetry(metrics) } : {}) });
  if (metrics) console.log(`durable-agent worker metrics on http://${metrics}/metrics`);
  console.log('durable-agent worker starting with', JSON.stringify(describeConfig(config)));
  const tracing = tracingFromEnv(process.env, 'durable-agent-worker');
  if (tracing) console.log('durable-agent worker exports traces over OTLP');
  const handle = await createAgentWorker(config, { workflowBundlePath: process.env.WORKFLOW_BUNDLE_PATH, ...(tracing ? { tracing } : {}) });
  console.log(`durable-agent worker polling task queue "${config.temporal.taskQueue}" on ${config.temporal.address}`);
  await handle.run();
  await tracing?.shutdown();
}

main().catch((err: unknown) => {
  // McpConfigError and tool-name collisions carry the same type: a person must fix the configuration.
  if (err instanceof ConfigError || (err as { type?: unknown } | null)?.type === 'ConfigInvalid') {
    console.error(redactor.text((err as Error).message));
    process.exit(EXIT_CONFIG);
  }
  if (err instanceof DependencyUnreachableError) {
    console.error(`durable-agent worker cannot start: ${redactor.text(err.message)}`);
    process.exit(EXIT_UNAVAILABLE);
  }
  console.error(redactor.error(err));
  process.exit(1);
});
