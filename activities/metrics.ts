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

function meter(): MetricMeter {
  try {
    return Context.current().metricMeter;
  } catch {
    // Outside an activity: the runtime's meter, but never create a runtime just to record (code
    // run without a worker, such as a benchmark, would then fix the runtime's options too early).
    const existing = (Runtime as unknown as { _instance?: Runtime })._instance;
    return existing ? existing.metricMeter : noopMetricMeter;
  }
}

export function countMetric(key: MetricKey, tags: MetricTags = {}, value = 1): void {
  if (!(value > 0)) return;
  const m = METRICS[key];
  meter().createCounter(m.name, undefined, m.help).add(value, tags);
}

export function observeMetric(key: MetricKey, value: number, tags: MetricTags = {}): void {
  if (!Number.isFinite(value) || value < 0) return;
  const m = METRICS[key];
  const valueType = 'valueType' in m ? m.valueType : 'float';
  meter().createHistogram(m.name, valueType, undefined, m.help).record(valueType === 'int' ? Math.round(value) : value, tags);
}
