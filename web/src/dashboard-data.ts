/*
 * The dashboard's figures, derived from GET /v1/metrics/series: counters
 * become rates between consecutive samples (a worker restart, where a total
 * drops, counts from zero), histograms become the mean of the observations
 * made between samples, and shares are taken over the same interval.
 */

import type { MetricsSample, MetricsSeries } from '../../api/metrics-history';

export type { MetricsSeries };

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

const increase = (now: number, before: number | undefined): number => (before === undefined || now < before ? now : now - before);

function intervals(series: MetricsSeries): Array<[MetricsSample, MetricsSample]> {
  const out: Array<[MetricsSample, MetricsSample]> = [];
  for (let i = 1; i < series.samples.length; i++) out.push([series.samples[i - 1]!, series.samples[i]!]);
  return out;
}

const timesOf = (series: MetricsSeries) => intervals(series).map(([, b]) => Date.parse(b.at) / 1000);

/** The label values a metric has shown in any sample. */
function keysOf(series: MetricsSeries, metric: string, field: 'values' | 'count'): string[] {
  const keys = new Set<string>();
  for (const s of series.samples) for (const k of Object.keys(s.metrics[metric]?.[field] ?? {})) keys.add(k);
  return [...keys].sort();
}

function delta(a: MetricsSample, b: MetricsSample, metric: string, field: 'values' | 'count' | 'sum', key: string): number {
  const now = b.metrics[metric]?.[field]?.[key] ?? 0;
  return increase(now, a.metrics[metric]?.[field]?.[key]);
}

/** A counter's rate per minute, one line per value of its first label. */
export function ratePerMinute(series: MetricsSeries, metric: string): Chart {
  const pairs = intervals(series);
  return {
    times: timesOf(series),
    lines: keysOf(series, metric, 'values').map((key) => ({
      label: key || metric,
      values: pairs.map(([a, b]) => {
        const seconds = (Date.parse(b.at) - Date.parse(a.at)) / 1000;
        return seconds > 0 ? (delta(a, b, metric, 'values', key) / seconds) * 60 : null;
      }),
    })),
  };
}

/** Each value's share of a counter's increase over an interval (null when it did not move). */
export function shares(series: MetricsSeries, metric: string, keys?: string[]): Chart {
  const pairs = intervals(series);
  const all = keysOf(series, metric, 'values');
  return {
    times: timesOf(series),
    lines: (keys ?? all).map((key) => ({
      label: key,
      values: pairs.map(([a, b]) => {
        const whole = all.reduce((n, k) => n + delta(a, b, metric, 'values', k), 0);
        return whole > 0 ? delta(a, b, metric, 'values', key) / whole : null;
      }),
    })),
  };
}

/** A histogram's mean per interval, times `scale` (1000 shows seconds as milliseconds). */
export function meanOf(series: MetricsSeries, metric: string, label: string, scale = 1): Chart {
  const pairs = intervals(series);
  const keys = keysOf(series, metric, 'count');
  return {
    times: timesOf(series),
    lines: [
      {
        label,
        values: pairs.map(([a, b]) => {
          const n = keys.reduce((t, k) => t + delta(a, b, metric, 'count', k), 0);
          const sum = keys.reduce((t, k) => t + delta(a, b, metric, 'sum', k), 0);
          return n > 0 ? (sum / n) * scale : null;
        }),
      },
    ],
  };
}

/** One counter's increase over another's, per interval (folds per turn, say). */
export function ratio(series: MetricsSeries, top: string, bottom: string, label: string): Chart {
  const pairs = intervals(series);
  const sumKeys = (metric: string, a: MetricsSample, b: MetricsSample) => keysOf(series, metric, 'values').reduce((t, k) => t + delta(a, b, metric, 'values', k), 0);
  return {
    times: timesOf(series),
    lines: [{ label, values: pairs.map(([a, b]) => (sumKeys(bottom, a, b) > 0 ? sumKeys(top, a, b) / sumKeys(bottom, a, b) : null)) }],
  };
}

/** A counter's total in the newest sample, over all its labels. */
export function latestTotal(series: MetricsSeries, metric: string, key?: string): number {
  const last = series.samples.at(-1)?.metrics[metric]?.values ?? {};
  return key !== undefined ? (last[key] ?? 0) : Object.values(last).reduce((a, b) => a + b, 0);
}

/** A gauge's value at each sample after the first, one line per value of its first label. */
export function gaugeOf(series: MetricsSeries, metric: string): Chart {
  const pairs = intervals(series);
  return {
    times: timesOf(series),
    lines: keysOf(series, metric, 'values').map((key) => ({ label: key || metric, values: pairs.map(([, b]) => b.metrics[metric]?.values[key] ?? null) })),
  };
}
