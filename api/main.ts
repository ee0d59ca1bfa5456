/**
 * `npm run api`: the HTTP API in front of Temporal (a worker must run:
 * `npm run worker`), and the web console at `/`, as `npm start` serves them.
 * Settings: the workers' TEMPORAL_* and encryption variables, API_PORT
 * (default 8787), API_HOST (default 127.0.0.1), API_TOKENS or
 * API_TOKENS_FILE (see `npm run api:token`), API_MAX_BODY_BYTES,
 * API_REQUESTS_PER_MINUTE, API_STREAMS_PER_PRINCIPAL, API_STREAM_STALL_MS
 * (default 30000: an event stream whose reader takes nothing that long is
 * closed), API_STREAM_QUEUE_EVENTS (default 10000), WORKER_METRICS_URLS
 * (the workers' /metrics addresses, comma-separated, for the dashboard),
 * METRICS_SAMPLE_MS (default 10000), API_CONSOLE_DIR (the console's built
 * bundle, default web/dist, built on first use; `off` serves no console) and
 * TEMPORAL_UI_URL (the Temporal Web UI, for the inspector's link to a
 * session; default the local stack's, http://127.0.0.1:TEMPORAL_UI_PORT
 * (8233), when Temporal is on this machine).
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { AgentClient } from '../client';
import { dataConverterFor } from '../codec/data-converter';
import { loadConfig } from '../workers/config';
import { temporalTransportOptions } from '../workers/temporal-connection-options';
import { clientTracingInterceptors, tracingFromEnv } from '../workers/tracing';
import { loadTokens, TokenBook } from './auth';
import { MetricsHistory } from './metrics-history';
import { DEFAULT_API_LIMITS, createApi, listen, type ApiLimits, type ConsoleOptions } from './server';

/** Where `npm run build:web` (and `npm install`) put the console's bundle. */
export const DEFAULT_CONSOLE_DIR = path.join(__dirname, '..', 'web', 'dist');

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
    streamStallMs: intSetting(env, 'API_STREAM_STALL_MS', DEFAULT_API_LIMITS.streamStallMs, 1_000, 3_600_000),
    streamQueueEvents: intSetting(env, 'API_STREAM_QUEUE_EVENTS', DEFAULT_API_LIMITS.streamQueueEvents, 100, 1_000_000),
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

/**
 * The web console `npm run api` serves: its bundle's folder and the Temporal
 * Web UI's address for the inspector's link; undefined with
 * API_CONSOLE_DIR=off. Without TEMPORAL_UI_URL, a Temporal server on this
 * machine is taken to be the local stack's, whose Web UI is on
 * TEMPORAL_UI_PORT (8233); a remote one gets no link.
 */
export function consoleSettings(env: NodeJS.ProcessEnv, temporalAddress: string): ConsoleOptions | undefined {
  const dir = env.API_CONSOLE_DIR?.trim();
  if (dir === 'off') return undefined;
  const configured = env.TEMPORAL_UI_URL?.trim();
  if (configured && !/^https?:\/\/[^\s/]+(\/\S*)?$/.test(configured)) throw new Error(`TEMPORAL_UI_URL must be an http(s) URL such as http://127.0.0.1:8233, got "${configured.slice(0, 80)}"`);
  const local = /^(127\.0\.0\.1|localhost|\[::1\]):\d+$/.test(temporalAddress);
  const ui = configured || (local ? `http://127.0.0.1:${intSetting(env, 'TEMPORAL_UI_PORT', 8233, 1, 65_535)}` : undefined);
  return { dir: dir ? path.resolve(dir) : DEFAULT_CONSOLE_DIR, ...(ui ? { temporalUiUrl: ui.replace(/\/+$/, '') } : {}) };
}

async function main(): Promise<void> {
  // The API talks to Temporal only: the model settings the workers need are not checked here.
  const config = loadConfig({ ...process.env, OPENAI_BASE_URL: process.env.OPENAI_BASE_URL?.trim() || 'http://127.0.0.1:9/v1' });
  const settings = apiSettings(process.env);
  const consoleOptions = consoleSettings(process.env, config.temporal.address);
  // As npm start does: the bundle is made at install; made here when it is missing from its default place.
  if (consoleOptions?.dir === DEFAULT_CONSOLE_DIR && !existsSync(path.join(DEFAULT_CONSOLE_DIR, 'index.html'))) await (await import('../web/build')).buildConsole();
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
  const { app, hub } = createApi({
    agent,
    tokens: settings.tokens,
    limits: settings.limits,
    metricsHistory,
    ...(consoleOptions ? { console: consoleOptions } : {}),
    log: (line) => process.stderr.write(`${line}\n`),
  });
  const server = await listen(app, settings.port, settings.host);
  process.stdout.write(`durable-agent API on ${server.url} (OpenAPI: ${server.url}/openapi.json), Temporal ${config.temporal.address}, task queue ${config.temporal.taskQueue}\n`);
  process.stdout.write(consoleOptions ? `Console: ${server.url}/ (sign in with a token)${consoleOptions.temporalUiUrl ? `, Temporal Web UI ${consoleOptions.temporalUiUrl}` : ''}\n` : 'Console: off (API_CONSOLE_DIR=off)\n');
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
