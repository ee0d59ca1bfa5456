/*
 * The dashboard's figures, derived from GET /v1/metrics/series: counters
 * become rates between consecutive samples (a label set whose total drops, a
 * worker restart, counts from zero), histograms become the mean of the
 * observations made between samples, and shares are taken over the same
 * interval. Each sample keeps every label of a metric, so a chart chooses the
 * labels its lines are split by (tool calls by status, or by tool).
 */

import type { MetricRow, MetricsSample, MetricsSeries } from '../../api/metrics-history';
import type { METRICS, MetricKey } from '../../workflows/metric-catalog';

export type { MetricsSeries };

/** A metric of the worker's catalog: a chart of a name the catalog no longer has does not compile. */
export type MetricName = (typeof METRICS)[MetricKey]['name'];

/** One plotted line: its label and a value per interval (null where nothing happened). */
export interface Line {
  label: string;
  values: Array<number | null>;
}

export interface Chart {
  /** Seconds since the epoch: the end of each interval. */
  times: number[];
  lines: Line[];
}

/** Which of a metric's label sets count, and how they split into lines. */
export interface Split {
  /** The labels each line stands for, in this order; none: one line for the whole metric. */
  by?: readonly string[];
  /** Only label sets with these values. */
  where?: Readonly<Record<string, string>>;
  /** The line's label: fixed, or from its values of `by` (default: those values, or the metric's name). */
  name?: string | ((values: string[]) => string);
}

type Field = 'value' | 'count' | 'sum';

const increase = (now: number, before: number | undefined): number => (before === undefined || now < before ? now : now - before);

function intervals(series: MetricsSeries): Array<[MetricsSample, MetricsSample]> {
  const out: Array<[MetricsSample, MetricsSample]> = [];
  for (let i = 1; i < series.samples.length; i++) out.push([series.samples[i - 1]!, series.samples[i]!]);
  return out;
}

const timesOf = (series: MetricsSeries) => intervals(series).map(([, b]) => Date.parse(b.at) / 1000);

const secondsBetween = (a: MetricsSample, b: MetricsSample) => (Date.parse(b.at) - Date.parse(a.at)) / 1000;

/** A metric's rows in a sample that pass `where` (none when no worker exported it). */
function rowsOf(sample: MetricsSample, metric: MetricName, where: Split['where']): MetricRow[] {
  const rows = sample.metrics[metric];
  if (!Array.isArray(rows)) return [];
  return where ? rows.filter((r) => Object.entries(where).every(([k, v]) => r.labels[k] === v)) : rows;
}

const labelSetKey = (row: MetricRow) => JSON.stringify(Object.entries(row.labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
const valuesOf = (row: MetricRow, by: readonly string[]) => by.map((l) => row.labels[l] ?? '');
const groupKey = (values: string[]) => JSON.stringify(values);

/** The groups (values of `by`) a metric has shown in any sample, sorted. */
function groupsOf(series: MetricsSeries, metric: MetricName, field: Field, split: Split): string[][] {
  const by = split.by ?? [];
  const seen = new Map<string, string[]>();
  for (const s of series.samples) {
    for (const r of rowsOf(s, metric, split.where)) {
      if (r[field] === undefined) continue;
      const values = valuesOf(r, by);
      seen.set(groupKey(values), values);
    }
  }
  return [...seen.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, v]) => v);
}

/** Sums by group (the values of `by`, keyed by groupKey). */
type Sums = Map<string, { values: string[]; n: number }>;

function add(sums: Sums, values: string[], n: number): void {
  const key = groupKey(values);
  const g = sums.get(key);
  if (g) g.n += n;
  else sums.set(key, { values, n });
}

/** Per group, the increase of `field` from sample a to b: each label set's own increase, summed. */
function increases(a: MetricsSample, b: MetricsSample, metric: MetricName, field: Field, split: Split): Sums {
  const before = new Map(rowsOf(a, metric, split.where).map((r) => [labelSetKey(r), r[field]]));
  const out: Sums = new Map();
  for (const r of rowsOf(b, metric, split.where)) {
    const now = r[field];
    if (now !== undefined) add(out, valuesOf(r, split.by ?? []), increase(now, before.get(labelSetKey(r))));
  }
  return out;
}

/** Per group, the sum of `field` in one sample (a gauge's value now). */
function totals(sample: MetricsSample, metric: MetricName, field: Field, split: Split): Sums {
  const out: Sums = new Map();
  for (const r of rowsOf(sample, metric, split.where)) {
    const v = r[field];
    if (v !== undefined) add(out, valuesOf(r, split.by ?? []), v);
  }
  return out;
}

const nOf = (sums: Sums, values: string[]) => sums.get(groupKey(values))?.n ?? 0;

function lineLabel(metric: string, split: Split, values: string[]): string {
  if (typeof split.name === 'string') return split.name;
  if (split.name) return split.name(values);
  return values.length > 0 ? values.map((v) => v || '(none)').join(' ') : metric;
}

const sumOf = (sums: Sums, keep: (values: string[]) => boolean = () => true) => [...sums.values()].reduce((t, g) => (keep(g.values) ? t + g.n : t), 0);

/** A counter's rate per minute, one line per group of `split.by`. */
export function ratePerMinute(series: MetricsSeries, metric: MetricName, split: Split = {}): Chart {
  const pairs = intervals(series);
  const perInterval = pairs.map(([a, b]) => ({ seconds: secondsBetween(a, b), inc: increases(a, b, metric, 'value', split) }));
  return {
    times: timesOf(series),
    lines: groupsOf(series, metric, 'value', split).map((values) => ({
      label: lineLabel(metric, split, values),
      values: perInterval.map(({ seconds, inc }) => (seconds > 0 ? (nOf(inc, values) / seconds) * 60 : null)),
    })),
  };
}

/**
 * Each value of the label `of` as a share of a counter's increase over an
 * interval (null when it did not move). With `within`, the share is taken
 * inside each value of that label: a tool's success rate is of 'status',
 * keys ['ok'], within 'tool'.
 */
export function shares(series: MetricsSeries, metric: MetricName, of: string, options: { keys?: readonly string[]; within?: string } = {}): Chart {
  const pairs = intervals(series);
  const { within } = options;
  const split: Split = { by: within ? [within, of] : [of] };
  const groups = groupsOf(series, metric, 'value', split);
  const keys = options.keys ?? [...new Set(groups.map((g) => g.at(-1)!))];
  const insides: Array<string | undefined> = within ? [...new Set(groups.map((g) => g[0]!))] : [undefined];
  const perInterval = pairs.map(([a, b]) => increases(a, b, metric, 'value', split));
  return {
    times: timesOf(series),
    lines: insides.flatMap((inside) =>
      keys.map((key) => ({
        label: inside === undefined ? key : keys.length === 1 ? inside || '(none)' : `${inside || '(none)'} ${key}`,
        values: perInterval.map((inc) => {
          const whole = inside === undefined ? sumOf(inc) : sumOf(inc, (v) => v[0] === inside);
          return whole > 0 ? nOf(inc, inside === undefined ? [key] : [inside, key]) / whole : null;
        }),
      })),
    ),
  };
}

/** A histogram's mean per interval, times `scale` (1000 shows seconds as milliseconds), one line per group. */
export function meanOf(series: MetricsSeries, metric: MetricName, split: Split = {}, scale = 1): Chart {
  const perInterval = intervals(series).map(([a, b]) => ({ count: increases(a, b, metric, 'count', split), sum: increases(a, b, metric, 'sum', split) }));
  return {
    times: timesOf(series),
    lines: groupsOf(series, metric, 'count', split).map((values) => ({
      label: lineLabel(metric, split, values),
      values: perInterval.map(({ count, sum }) => {
        const n = nOf(count, values);
        return n > 0 ? (nOf(sum, values) / n) * scale : null;
      }),
    })),
  };
}

/** One counter's increase over another's, per interval (folds per turn, say). */
export function ratio(series: MetricsSeries, top: MetricName, bottom: MetricName, label: string): Chart {
  const pairs = intervals(series);
  return {
    times: timesOf(series),
    lines: [
      {
        label,
        values: pairs.map(([a, b]) => {
          const under = sumOf(increases(a, b, bottom, 'value', {}));
          return under > 0 ? sumOf(increases(a, b, top, 'value', {})) / under : null;
        }),
      },
    ],
  };
}

/** A gauge's value at each sample after the first, one line per group. */
export function gaugeOf(series: MetricsSeries, metric: MetricName, split: Split = {}): Chart {
  const perSample = intervals(series).map(([, b]) => totals(b, metric, 'value', split));
  return {
    times: timesOf(series),
    lines: groupsOf(series, metric, 'value', split).map((values) => ({
      label: lineLabel(metric, split, values),
      values: perSample.map((now) => now.get(groupKey(values))?.n ?? null),
    })),
  };
}

/** Charts of the same series drawn as one (their times are the same). */
export function combine(...charts: Chart[]): Chart {
  return { times: charts[0]?.times ?? [], lines: charts.flatMap((c) => c.lines) };
}

/** A counter's total (or a gauge's value) in the newest sample, over the label sets that pass `where`. */
export function latestTotal(series: MetricsSeries, metric: MetricName, where?: Split['where']): number {
  const last = series.samples.at(-1);
  return last ? sumOf(totals(last, metric, 'value', { where })) : 0;
}

/** A gauge's value in the newest sample, per value of one label. */
export function latestBy(series: MetricsSeries, metric: MetricName, label: string): Array<[string, number]> {
  const last = series.samples.at(-1);
  if (!last) return [];
  return [...totals(last, metric, 'value', { by: [label] }).values()].map((g) => [g.values[0]!, g.n]);
}
