/**
 * `npm run api`: the HTTP API in front of Temporal (a worker must run:
 * `npm run worker`). Settings: the workers' TEMPORAL_* and encryption
 * variables, API_PORT (default 8787), API_HOST (default 127.0.0.1),
 * API_TOKENS or API_TOKENS_FILE (see `npm run api:token`), API_MAX_BODY_BYTES,
 * API_REQUESTS_PER_MINUTE, API_STREAMS_PER_PRINCIPAL, WORKER_METRICS_URLS
 * (the workers' /metrics addresses, comma-separated, for the dashboard) and
 * METRICS_SAMPLE_MS (default 10000).
 */
import { AgentClient } from '../client';
import { dataConverterFor } from '../codec/data-converter';
import { loadConfig } from '../workers/config';
import { temporalTransportOptions } from '../workers/temporal-connection-options';
import { clientTracingInterceptors, tracingFromEnv } from '../workers/tracing';
import { loadTokens, TokenBook } from './auth';
import { MetricsHistory } from './metrics-history';
import { DEFAULT_API_LIMITS, createApi, listen, type ApiLimits } from './server';

function intSetting(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) throw new Error(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
  return n;
}

export function apiSettings(env: NodeJS.ProcessEnv) {
  const limits: ApiLimits = {
    ...DEFAULT_API_LIMITS,
    maxBodyBytes: intSetting(env, 'API_MAX_BODY_BYTES', DEFAULT_API_LIMITS.maxBodyBytes, 1_024, 16 * 1024 * 1024),
    requestsPerMinute: intSetting(env, 'API_REQUESTS_PER_MINUTE', DEFAULT_API_LIMITS.requestsPerMinute, 1, 1_000_000),
    streamsPerPrincipal: intSetting(env, 'API_STREAMS_PER_PRINCIPAL', DEFAULT_API_LIMITS.streamsPerPrincipal, 1, 10_000),
  };
  const workerMetricsUrls = (env.WORKER_METRICS_URLS ?? '')
    .split(',')
    .map((u) => u.trim())
    .filter(Boolean);
  for (const u of workerMetricsUrls) {
    if (!/^https?:\/\/[^\s/]+(\/\S*)?$/.test(u)) throw new Error(`WORKER_METRICS_URLS must hold http(s) URLs separated by commas, such as http://127.0.0.1:9464/metrics; "${u.slice(0, 80)}" is not one`);
  }
  return {
    port: intSetting(env, 'API_PORT', 8787, 0, 65_535),
    host: env.API_HOST?.trim() || '127.0.0.1',
    limits,
    tokens: new TokenBook(loadTokens(env)),
    workerMetricsUrls,
    metricsSampleMs: intSetting(env, 'METRICS_SAMPLE_MS', 10_000, 1_000, 3_600_000),
  };
}

async function main(): Promise<void> {
  // The API talks to Temporal only: the model settings the workers need are not checked here.
  const config = loadConfig({ ...process.env, OPENAI_BASE_URL: process.env.OPENAI_BASE_URL?.trim() || 'http://127.0.0.1:9/v1' });
  const settings = apiSettings(process.env);
  if (settings.tokens.size === 0) process.stderr.write('api: no tokens configured (API_TOKENS / API_TOKENS_FILE): every request will get 401. `npm run api:token -- --tenant t --user u` makes one.\n');
  // With an OTLP endpoint configured, each request's Temporal calls start the trace the workers continue.
  const tracing = tracingFromEnv(process.env, 'durable-agent-api');
  const agent = await AgentClient.connect({
    ...(tracing ? { interceptors: clientTracingInterceptors() } : {}),
    address: config.temporal.address,
    namespace: config.temporal.namespace,
    taskQueue: config.temporal.taskQueue,
    dataConverter: dataConverterFor(config.encryption),
    ...temporalTransportOptions(config.temporal),
  });
  const metricsHistory = settings.workerMetricsUrls.length > 0 ? new MetricsHistory(settings.workerMetricsUrls, { everyMs: settings.metricsSampleMs, keep: 360 }) : undefined;
  metricsHistory?.start();
  const { app, hub } = createApi({ agent, tokens: settings.tokens, limits: settings.limits, metricsHistory, log: (line) => process.stderr.write(`${line}\n`) });
  const server = await listen(app, settings.port, settings.host);
  process.stdout.write(`durable-agent API on ${server.url} (OpenAPI: ${server.url}/openapi.json), Temporal ${config.temporal.address}, task queue ${config.temporal.taskQueue}\n`);
  const stop = () =>
    void server.close().then(() => {
      hub.close();
      metricsHistory?.stop();
      process.exit(0);
    });
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

if (require.main === module) {
  main().catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(78);
  });
}
