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

/*
 * A record crosses into the SDK's native meter, about 40 µs under load (six
 * a model call). Made where they happen, an activity's records ran before it
 * handed back its result. So a record of activity scope takes its meter and
 * tags at once and is made once the current callbacks are done, by when the
 * result is on its way to the server (docs/performance.md). Records of worker
 * scope (MCP connections, off any step's path) are made at once: a scrape
 * right after a connection event sees it.
 */
const pending: Array<() => void> = [];
let flushScheduled = false;

function recordSoon(scope: MeterScope, record: () => void): void {
  if (scope === 'worker') {
    recordOne(record);
    return;
  }
  pending.push(record);
  if (flushScheduled) return;
  flushScheduled = true;
  setImmediate(flushMetrics);
}

/** Makes every record still waiting. */
export function flushMetrics(): void {
  flushScheduled = false;
  for (const record of pending.splice(0)) recordOne(record);
}

let refusedLogged = false;

/** A record the meter refuses is dropped alone, and the first such refusal logged: a metric must never fail the work it measures. */
function recordOne(record: () => void): void {
  try {
    record();
  } catch (err) {
    if (refusedLogged) return;
    refusedLogged = true;
    console.warn(`[metrics] the meter refused a record (${err instanceof Error ? err.message : String(err)}); later refusals are not logged`);
  }
}

export function countMetric(key: MetricKey, tags: MetricTags = {}, value = 1, scope: MeterScope = 'activity'): void {
  if (!(value > 0)) return;
  const m = METRICS[key];
  const { meter, tags: base } = target(scope);
  const all = { ...base, ...tags };
  recordSoon(scope, () => kept(meter, `counter ${m.name}`, () => meter.createCounter(m.name, undefined, m.help)).add(value, all));
}

export function observeMetric(key: MetricKey, value: number, tags: MetricTags = {}, scope: MeterScope = 'activity'): void {
  if (!Number.isFinite(value) || value < 0) return;
  const m = METRICS[key];
  const valueType = 'valueType' in m ? m.valueType : 'float';
  const { meter, tags: base } = target(scope);
  const all = { ...base, ...tags };
  const recorded = valueType === 'int' ? Math.round(value) : value;
  recordSoon(scope, () => kept(meter, `histogram ${valueType} ${m.name}`, () => meter.createHistogram(m.name, valueType, undefined, m.help)).record(recorded, all));
}

/** Sets a gauge of the catalog. */
export function setMetric(key: MetricKey, value: number, tags: MetricTags = {}, scope: MeterScope = 'activity'): void {
  if (!Number.isFinite(value) || value < 0) return;
  const m = METRICS[key];
  const valueType = 'valueType' in m ? m.valueType : 'int';
  const { meter, tags: base } = target(scope);
  const all = { ...base, ...tags };
  recordSoon(scope, () => kept(meter, `gauge ${valueType} ${m.name}`, () => meter.createGauge(m.name, valueType, undefined, m.help)).set(value, all));
}
