import { Context } from '@temporalio/activity';
import { noopMetricMeter, type MetricMeter, type MetricTags } from '@temporalio/common';
import { Runtime } from '@temporalio/worker';
import { METRICS, type MetricKey } from '../workflows/metric-catalog';

/*
 * Metrics recorded in the worker process: by activities (through the
 * activity's meter, which adds `activityType`, `namespace` and `taskQueue`)
 * and by worker-wide code such as MCP connections (through the runtime's
 * meter). Both land on the exporter the runtime was installed with
 * (workers/telemetry.ts); without one they cost nothing.
 */

/** `worker`: the runtime's meter even inside an activity (per-connection figures, the same series whoever records them). */
export type MeterScope = 'activity' | 'worker';

function meter(scope: MeterScope = 'activity'): MetricMeter {
  try {
    if (scope === 'worker') throw new Error('worker scope');
    return Context.current().metricMeter;
  } catch {
    // Outside an activity: the runtime's meter, but never create a runtime just to record (code
    // run without a worker, such as a benchmark, would then fix the runtime's options too early).
    const existing = (Runtime as unknown as { _instance?: Runtime })._instance;
    return existing ? existing.metricMeter : noopMetricMeter;
  }
}

export function countMetric(key: MetricKey, tags: MetricTags = {}, value = 1, scope?: MeterScope): void {
  if (!(value > 0)) return;
  const m = METRICS[key];
  meter(scope).createCounter(m.name, undefined, m.help).add(value, tags);
}

export function observeMetric(key: MetricKey, value: number, tags: MetricTags = {}, scope?: MeterScope): void {
  if (!Number.isFinite(value) || value < 0) return;
  const m = METRICS[key];
  const valueType = 'valueType' in m ? m.valueType : 'float';
  meter(scope).createHistogram(m.name, valueType, undefined, m.help).record(valueType === 'int' ? Math.round(value) : value, tags);
}

/** Sets a gauge of the catalog. */
export function setMetric(key: MetricKey, value: number, tags: MetricTags = {}, scope?: MeterScope): void {
  if (!Number.isFinite(value) || value < 0) return;
  const m = METRICS[key];
  meter(scope).createGauge(m.name, 'valueType' in m ? m.valueType : 'int', undefined, m.help).set(value, tags);
}
