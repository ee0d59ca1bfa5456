import { metricMeter } from '@temporalio/workflow';
import type { MetricTags } from '@temporalio/common';
import { METRICS, type MetricKey } from './metric-catalog';

/*
 * Metrics recorded by the session workflow. The SDK's workflow meter records
 * nothing while a workflow replays, so a counter counts each event once
 * however often the worker replays the history. Recording is not a command:
 * adding or moving a record never breaks a running session's replay.
 */

/** Adds to a counter of the catalog. */
export function count(key: MetricKey, tags: MetricTags = {}, value = 1): void {
  const m = METRICS[key];
  metricMeter.createCounter(m.name, undefined, m.help).add(value, tags);
}

/** Records a histogram value of the catalog (seconds for durations). */
export function observe(key: MetricKey, value: number, tags: MetricTags = {}): void {
  const m = METRICS[key];
  if (!Number.isFinite(value) || value < 0) return;
  metricMeter.createHistogram(m.name, 'valueType' in m ? m.valueType : 'float', undefined, m.help).record(m.valueType === 'int' ? Math.round(value) : value, tags);
}
