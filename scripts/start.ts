/**
 * `npm start`: the whole product on this machine. Brings up the local stack
 * (Temporal dev server with its Web UI, a MongoDB-compatible server; left
 * running afterwards), a worker, the HTTP API and the web console, and
 * prints the console's address. Without OPENAI_API_KEY or OPENAI_BASE_URL a
 * scripted model plays the model (scripted-model/console-model.ts). Without
 * API_TOKENS or API_TOKENS_FILE it makes tokens for this run, for a user
 * and an approver of tenant "local", and prints them to paste into the
 * console's sign-in form (never in a URL). Ctrl-C stops what it
 * started here; `npm run stack:down` stops the stack.
 *
 * Settings: everything `npm run worker` and `npm run api` read, API_PORT
 * (default 8787), API_HOST (default 127.0.0.1) and METRICS_PORT (default
 * 9464 here) among them.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { Runtime } from '@temporalio/worker';
import { mintToken, TokenBook, type ApiTokenEntry } from '../api/auth';
import { apiSettings } from '../api/main';
import { MetricsHistory } from '../api/metrics-history';
import { createApi, listen } from '../api/server';
import { AgentClient } from '../client/agent-client';
import { dataConverterFor } from '../codec/data-converter';
import { demoWorkerLogger } from '../demo/worker-logger';
import { consoleModel } from '../scripted-model/console-model';
import { ScriptedModelServer } from '../scripted-model';
import { buildConsole } from '../web/build';
import { createAgentWorker, type AgentWorkerHandle } from '../workers/agent-worker';
import { ConfigError, loadConfig } from '../workers/config';
import { temporalTransportOptions } from '../workers/temporal-connection-options';
import { metricsBindAddress, prometheusTelemetry } from '../workers/telemetry';
import { clientTracingInterceptors, tracingFromEnv } from '../workers/tracing';
import { ensureConfiguredModel } from './fetch-embedding-model';
import { ensureStack } from './stack';

const out = (line: string): void => void process.stdout.write(`${line}\n`);
const CONSOLE_DIR = path.join(__dirname, '..', 'web', 'dist');

interface Started {
  worker?: AgentWorkerHandle;
  model?: ScriptedModelServer;
  agent?: AgentClient;
  server?: { close(): Promise<void> };
  hub?: { close(): void };
  history?: MetricsHistory;
}

async function stop(started: Started): Promise<void> {
  await started.server?.close().catch(() => undefined);
  started.hub?.close();
  started.history?.stop();
  await started.worker?.shutdown().catch(() => undefined);
  await started.agent?.client.connection.close().catch(() => undefined);
  await started.model?.close().catch(() => undefined);
}

async function main(started: Started): Promise<void> {
  // The worker's INFO lines would bury the address; warnings and errors still show.
  // The worker's metrics (ours and Temporal's) on METRICS_PORT, 9464 by default here.
  const metrics = metricsBindAddress(process.env, 9464)!;
  Runtime.install({ logger: demoWorkerLogger(), telemetryOptions: prometheusTelemetry(metrics) });
  const stack = await ensureStack({ log: (line) => out(`  ${line}`) });
  const scripted = !process.env.OPENAI_API_KEY && !process.env.OPENAI_BASE_URL;
  if (scripted) {
    started.model = await ScriptedModelServer.start({ fallback: consoleModel });
    out(`model: none configured (OPENAI_API_KEY / OPENAI_BASE_URL), so the scripted console model answers at ${started.model.baseUrl}`);
  }
  const config = loadConfig({
    ...process.env,
    TEMPORAL_ADDRESS: stack.temporalAddress,
    TEMPORAL_NAMESPACE: stack.temporalNamespace,
    MONGODB_URI: process.env.MONGODB_URI?.trim() || stack.mongoUri,
    ...(started.model ? { OPENAI_BASE_URL: started.model.baseUrl, MODEL_NAME: 'scripted-console' } : {}),
  });
  if (!scripted) out(`model: "${config.model.name}" at ${config.model.baseUrl}`);
  // Like the stack, a local embedding model is installed on first use.
  await ensureConfiguredModel(config.model.embeddingModel, { log: (line) => out(`  ${line}`) });

  const tracing = tracingFromEnv(process.env, 'durable-agent');
  if (tracing) out('traces: exported over OTLP (OTEL_EXPORTER_OTLP_ENDPOINT)');
  started.worker = await createAgentWorker(config, tracing ? { tracing } : {});
  const workerRun = started.worker.run();
  workerRun.catch((err: unknown) => {
    process.stderr.write(`worker failed: ${err instanceof Error ? err.message : String(err)}\n`);
    void stop(started).finally(() => process.exit(1));
  });
  out(`worker: task queue ${config.temporal.taskQueue} on ${config.temporal.address}`);

  const settings = apiSettings(process.env);
  const links: Array<{ who: string; token: string }> = [];
  let tokens = settings.tokens;
  if (tokens.size === 0) {
    // Tokens for this run only: held in memory, printed once, gone when it stops.
    const entries: ApiTokenEntry[] = [];
    for (const [user, roles] of [
      ['ana', ['user']],
      ['boss', ['user', 'approver', 'admin']],
    ] as const) {
      const { token, entry } = mintToken({ tenant: 'local', user, roles: [...roles], name: `npm start (${user})` });
      entries.push(entry);
      links.push({ who: `local/${user} (${roles.join(', ')})`, token });
    }
    tokens = new TokenBook(entries);
  }

  if (!existsSync(path.join(CONSOLE_DIR, 'index.html'))) await buildConsole();
  started.agent = await AgentClient.connect({
    ...(tracing ? { interceptors: clientTracingInterceptors() } : {}),
    address: config.temporal.address,
    namespace: config.temporal.namespace,
    taskQueue: config.temporal.taskQueue,
    dataConverter: dataConverterFor(config.encryption),
    ...temporalTransportOptions(config.temporal),
  });
  // The dashboard samples this worker's metrics (and any others named in WORKER_METRICS_URLS).
  started.history = new MetricsHistory([`http://${metrics}/metrics`, ...settings.workerMetricsUrls], { everyMs: settings.metricsSampleMs, keep: 360 });
  started.history.start();
  const api = createApi({
    agent: started.agent,
    metricsHistory: started.history,
    tokens,
    limits: settings.limits,
    console: { dir: CONSOLE_DIR, ...(stack.uiUrl ? { temporalUiUrl: stack.uiUrl } : {}) },
    log: (line) => process.stderr.write(`${line}\n`),
  });
  started.hub = api.hub;
  const server = await listen(api.app, settings.port, settings.host);
  started.server = server;

  out('');
  out(`Console: ${server.url}/`);
  for (const l of links) out(`  token for ${l.who}: ${l.token}`);
  out(links.length > 0 ? '  (paste one into the sign-in form; they last as long as this process)' : '  sign in with one of the tokens in API_TOKENS / API_TOKENS_FILE');
  out(`API: ${server.url}/v1 (OpenAPI: ${server.url}/openapi.json)`);
  out(`Metrics: worker http://${metrics}/metrics, API ${server.url}/metrics`);
  if (stack.uiUrl) out(`Temporal Web UI: ${stack.uiUrl}`);
  out('Ctrl-C stops the worker, the API and the console; the local stack keeps running (npm run stack:down).');
}

const started: Started = {};
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    out('stopping the API, the console and the worker');
    void stop(started).finally(() => process.exit(0));
  });
}
main(started).catch(async (err: unknown) => {
  await stop(started);
  process.stderr.write(`start failed: ${err instanceof ConfigError || err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
