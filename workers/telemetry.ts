import type { TelemetryOptions } from '@temporalio/worker';
import { histogramBuckets } from '../workflows/metric-catalog';
import { ConfigError } from './config';

/**
 * The worker's Prometheus endpoint: Temporal's own SDK metrics and ours
 * (workflows/metric-catalog.ts) on one scrape, served by the SDK's native
 * exporter at http://<host>:<port>/metrics. Durations are in seconds.
 */
export function prometheusTelemetry(bindAddress: string): TelemetryOptions {
  return {
    metrics: {
      prometheus: {
        bindAddress,
        useSecondsForDurations: true,
        histogramBucketOverrides: histogramBuckets(),
      },
    },
  };
}

/**
 * METRICS_PORT (and METRICS_HOST, default 127.0.0.1) from the environment;
 * undefined when unset (no exporter: recording costs nothing).
 */
export function metricsBindAddress(env: NodeJS.ProcessEnv, fallbackPort?: number): string | undefined {
  const raw = env.METRICS_PORT?.trim();
  const host = env.METRICS_HOST?.trim() || '127.0.0.1';
  if (!raw) return fallbackPort === undefined ? undefined : `${host}:${fallbackPort}`;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 1 || port > 65_535) {
    throw new ConfigError([{ field: 'metrics.port', source: 'METRICS_PORT', message: `"${raw.slice(0, 20)}" is not a port number`, fix: 'set METRICS_PORT to a port from 1 to 65535, or leave it unset for no metrics endpoint' }]);
  }
  return `${host}:${port}`;
}
