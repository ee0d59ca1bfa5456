import { Context } from '@temporalio/activity';
import { noopMetricMeter, type MetricCounter, type MetricGauge, type MetricHistogram, type MetricMeter, type MetricTags } from '@temporalio/common';
import { Runtime } from '@temporalio/worker';
import { METRICS, type MetricKey } from '../workflows/metric-catalog';

/*
 * Metrics recorded in the worker process: by activities (tagged with the
 * activity's `activityType`, `namespace` and `taskQueue`, as the activity's
 * own meter would) and by worker-wide code such as MCP connections (without
 * them). Both go through the runtime's meter to the exporter it was
 * installed with (workers/telemetry.ts); without one they cost nothing.
 */

/** `worker`: the runtime's meter even inside an activity (per-connection figures, the same series whoever records them). */
export type MeterScope = 'activity' | 'worker';

/** The runtime's meter; never creates a runtime just to record (code run without a worker, such as a benchmark, would then fix the runtime's options too early). */
function runtimeMeter(): MetricMeter {
  const existing = (Runtime as unknown as { _instance?: Runtime })._instance;
  return existing ? existing.metricMeter : noopMetricMeter;
}

/**
 * Where a record goes: the runtime's meter, with the tags an activity's own
 * meter adds (`namespace`, `taskQueue`, `activityType`) when recorded inside
 * one. Recording through the activity's meter would give the same series,
 * but its `create*` makes a new native instrument on every record (six a
 * model call, docs/performance.md); instruments on the runtime's meter are
 * made once and kept.
 */
function target(scope: MeterScope): { meter: MetricMeter; tags: MetricTags } {
  const meter = runtimeMeter();
  if (scope === 'worker') return { meter, tags: {} };
  try {
    const { info } = Context.current();
    return { meter, tags: { namespace: info.namespace, taskQueue: info.taskQueue, activityType: info.activityType } };
  } catch {
    return { meter, tags: {} };
  }
}

type Instrument = MetricCounter | MetricHistogram | MetricGauge;
const instruments = new WeakMap<MetricMeter, Map<string, Instrument>>();

function kept<T extends Instrument>(meter: MetricMeter, id: string, make: () => T): T {
  let byId = instruments.get(meter);
  if (!byId) instruments.set(meter, (byId = new Map()));
  let found = byId.get(id) as T | undefined;
  if (!found) byId.set(id, (found = make()));
  return found;
}

export function countMetric(key: MetricKey, tags: MetricTags = {}, value = 1, scope: MeterScope = 'activity'): void {
  if (!(value > 0)) return;
  const m = METRICS[key];
  const { meter, tags: base } = target(scope);
  kept(meter, `counter ${m.name}`, () => meter.createCounter(m.name, undefined, m.help)).add(value, { ...base, ...tags });
}

export function observeMetric(key: MetricKey, value: number, tags: MetricTags = {}, scope: MeterScope = 'activity'): void {
  if (!Number.isFinite(value) || value < 0) return;
  const m = METRICS[key];
  const valueType = 'valueType' in m ? m.valueType : 'float';
  const { meter, tags: base } = target(scope);
  kept(meter, `histogram ${valueType} ${m.name}`, () => meter.createHistogram(m.name, valueType, undefined, m.help)).record(valueType === 'int' ? Math.round(value) : value, { ...base, ...tags });
}

/** Sets a gauge of the catalog. */
export function setMetric(key: MetricKey, value: number, tags: MetricTags = {}, scope: MeterScope = 'activity'): void {
  if (!Number.isFinite(value) || value < 0) return;
  const m = METRICS[key];
  const valueType = 'valueType' in m ? m.valueType : 'int';
  const { meter, tags: base } = target(scope);
  kept(meter, `gauge ${valueType} ${m.name}`, () => meter.createGauge(m.name, valueType, undefined, m.help)).set(value, { ...base, ...tags });
}
