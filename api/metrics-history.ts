import { METRICS, type Capability, type MetricSpec } from '../workflows/metric-catalog';
import { scrape, type Family } from './prometheus-text';

/*
 * The dashboard's data: the workers' metrics scraped every `everyMs` and kept
 * for the last `keep` samples, in memory. Each sample holds, per catalog
 * metric, one row per combination of the metric's own labels (tool and
 * status, server and outcome, ...), summed over workers and over the labels
 * Temporal adds (namespace, task queue, workflow or activity type): counters
 * as their running totals, histograms as count and sum. Every label is kept so
 * the page can split a chart by the one it names (calls by status, not by
 * tool). The page turns totals into rates between samples. Counters and
 * histograms are kept going up per worker across its restarts and missed
 * scrapes (WorkerTotals) before they are summed. A worker that does not answer
 * is named in the sample; its counters keep their last totals, its gauges are
 * left out. Gauges are the mean over the workers that answered.
 */

/** One label set of a metric in a sample. */
export interface MetricRow {
  /** The metric's catalog labels and their values ('' when a series lacks one); {} when it has none. */
  labels: Record<string, string>;
  /** Counters: the running total; gauges: the value. */
  value?: number;
  /** Histograms: observations and their sum. */
  count?: number;
  sum?: number;
}

export interface MetricsSample {
  at: string;
  /** By metric name; a metric no worker exported is absent. */
  metrics: Record<string, MetricRow[]>;
  /** Worker endpoints that did not answer this time, with why. */
  unreachable: Array<{ url: string; error: string }>;
}

export interface MetricsSeries {
  everyMs: number;
  /** How many samples the server keeps. */
  keep: number;
  catalog: Array<{ name: string; kind: MetricSpec['kind']; capability: Capability; help: string; labels: string[] }>;
  workers: string[];
  samples: MetricsSample[];
}

/** Adds `rows` of `metric` to `into`, summing rows of the same label set. */
function addRows(into: Record<string, MetricRow[]>, metric: string, rows: MetricRow[]): void {
  const list = (into[metric] ??= []);
  for (const r of rows) {
    const key = JSON.stringify(r.labels);
    const row = list.find((x) => JSON.stringify(x.labels) === key);
    if (!row) {
      list.push({ ...r, labels: { ...r.labels } });
      continue;
    }
    if (r.count !== undefined) row.count = (row.count ?? 0) + r.count;
    if (r.sum !== undefined) row.sum = (row.sum ?? 0) + r.sum;
    if (r.value !== undefined) row.value = (row.value ?? 0) + r.value;
  }
}

/** Adds one scrape's catalog metrics to `into`, a row per label set of the catalog's labels. */
export function foldScrape(families: Map<string, Family>, into: Record<string, MetricRow[]>): void {
  for (const spec of Object.values(METRICS) as MetricSpec[]) {
    const family = families.get(spec.name);
    if (!family) continue;
    const rows = (into[spec.name] ??= []);
    for (const s of family.metrics) {
      // NaN or ±Inf (a broken exporter) would reach the page as null and read as 0: such a series is left out.
      if ([s.value, s.count, s.sum].some((v) => v !== undefined && !Number.isFinite(v))) continue;
      const labels = Object.fromEntries(spec.labels.map((l) => [l, s.labels[l] ?? '']));
      let row = rows.find((r) => spec.labels.every((l) => r.labels[l] === labels[l]));
      if (!row) rows.push((row = { labels }));
      if (spec.kind === 'histogram') {
        row.count = (row.count ?? 0) + (s.count ?? 0);
        row.sum = (row.sum ?? 0) + (s.sum ?? 0);
      } else {
        row.value = (row.value ?? 0) + (s.value ?? 0);
      }
    }
  }
}

/** A counter's or histogram's running values, by metric and label set, for one worker. */
type Totals = Map<string, { metric: string; labels: Record<string, string>; value: number; count: number; sum: number }>;

const rowKey = (metric: string, labels: Record<string, string>) => `${metric}\u0000${JSON.stringify(labels)}`;

/**
 * Keeps one worker's counters and histograms going up across its restarts and
 * missed scrapes: a value lower than the last one seen is a restart (what it
 * had counted is kept as an offset), and a series missing from a scrape, or a
 * worker that did not answer, keeps its last total. Summed over workers
 * afterwards, a restart of one no longer reads as a drop of all of them (which
 * the page took for a reset, plotting the whole total as one interval's rate).
 */
class WorkerTotals {
  private readonly raw: Totals = new Map();
  private readonly offset: Totals = new Map();

  /** Folds one scrape of this worker in; returns its corrected totals. */
  update(rows: Record<string, MetricRow[]>): Totals {
    const seen = new Set<string>();
    for (const [metric, list] of Object.entries(rows)) {
      if (!isCumulative(metric)) continue;
      for (const row of list) {
        const key = rowKey(metric, row.labels);
        seen.add(key);
        const now = { metric, labels: row.labels, value: row.value ?? 0, count: row.count ?? 0, sum: row.sum ?? 0 };
        const before = this.raw.get(key);
        if (before && (now.value < before.value || now.count < before.count)) this.addOffset(key, before);
        this.raw.set(key, now);
      }
    }
    // A series this worker had and no longer shows (restarted, and not counted again yet): its total stays.
    for (const [key, before] of this.raw) {
      if (seen.has(key)) continue;
      this.addOffset(key, before);
      this.raw.set(key, { ...before, value: 0, count: 0, sum: 0 });
    }
    return this.corrected();
  }

  /** The last corrected totals (a worker that did not answer this time). */
  corrected(): Totals {
    const out: Totals = new Map();
    for (const [key, r] of this.raw) {
      const off = this.offset.get(key);
      out.set(key, { ...r, value: r.value + (off?.value ?? 0), count: r.count + (off?.count ?? 0), sum: r.sum + (off?.sum ?? 0) });
    }
    return out;
  }

  private addOffset(key: string, by: { metric: string; labels: Record<string, string>; value: number; count: number; sum: number }): void {
    const off = this.offset.get(key) ?? { ...by, value: 0, count: 0, sum: 0 };
    this.offset.set(key, { ...off, value: off.value + by.value, count: off.count + by.count, sum: off.sum + by.sum });
  }
}

const KIND_BY_NAME = new Map((Object.values(METRICS) as MetricSpec[]).map((m) => [m.name, m.kind]));
const isCumulative = (metric: string) => KIND_BY_NAME.get(metric) === 'counter' || KIND_BY_NAME.get(metric) === 'histogram';

export class MetricsHistory {
  private readonly samples: MetricsSample[] = [];
  private readonly totals = new Map<string, WorkerTotals>();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(
    private readonly workerUrls: string[],
    /** `scrapeTimeoutMs`: how long one scrape may take (5 s, or `everyMs` when shorter). */
    private readonly options: { everyMs: number; keep: number; scrapeTimeoutMs?: number } = { everyMs: 10_000, keep: 360 },
  ) {}

  /** Takes a sample now and then every `everyMs`. */
  start(): void {
    if (this.timer || this.workerUrls.length === 0) return;
    void this.sampleNow();
    this.timer = setInterval(() => void this.sampleNow(), this.options.everyMs);
    this.timer.unref?.();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One sample of every worker (concurrent calls share one scrape). */
  sampleNow(): Promise<void> {
    this.running ??= this.take().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async take(): Promise<void> {
    const metrics: MetricsSample['metrics'] = {};
    const unreachable: MetricsSample['unreachable'] = [];
    const scraped = await Promise.allSettled(this.workerUrls.map((url) => scrape(url, this.options.scrapeTimeoutMs ?? Math.min(5_000, this.options.everyMs))));
    // Gauges are a state of each worker (connected or not, a share of its time): their mean over the workers that
    // answered, not their sum (two connected workers are not "2 connected").
    const gauges = new Map<string, { metric: string; labels: Record<string, string>; sum: number; workers: number }>();
    scraped.forEach((r, i) => {
      const url = this.workerUrls[i]!;
      const totals = this.totals.get(url) ?? new WorkerTotals();
      this.totals.set(url, totals);
      let cumulative: Totals;
      if (r.status === 'fulfilled') {
        const own: Record<string, MetricRow[]> = {};
        foldScrape(r.value, own);
        cumulative = totals.update(own);
        // Gauges as they are now; counters and histograms below, corrected.
        for (const [metric, rows] of Object.entries(own)) {
          if (isCumulative(metric)) continue;
          for (const row of rows) {
            const key = rowKey(metric, row.labels);
            const g = gauges.get(key) ?? { metric, labels: row.labels, sum: 0, workers: 0 };
            g.sum += row.value ?? 0;
            g.workers += 1;
            gauges.set(key, g);
          }
        }
      } else {
        cumulative = totals.corrected();
        unreachable.push({ url: shownUrl(url), error: withoutCredentials(r.reason instanceof Error ? r.reason.message : String(r.reason), url) });
      }
      for (const t of cumulative.values()) {
        const kind = KIND_BY_NAME.get(t.metric);
        addRows(metrics, t.metric, [kind === 'histogram' ? { labels: t.labels, count: t.count, sum: t.sum } : { labels: t.labels, value: t.value }]);
      }
    });
    for (const g of gauges.values()) addRows(metrics, g.metric, [{ labels: g.labels, value: g.sum / g.workers }]);
    this.samples.push({ at: new Date().toISOString(), metrics, unreachable });
    if (this.samples.length > this.options.keep) this.samples.splice(0, this.samples.length - this.options.keep);
  }

  /** The samples kept, oldest first; with `after` (an ISO time), only those taken later. */
  series(after?: string): MetricsSeries {
    const since = after === undefined ? undefined : Date.parse(after);
    return {
      everyMs: this.options.everyMs,
      keep: this.options.keep,
      catalog: (Object.values(METRICS) as MetricSpec[]).map(({ name, kind, capability, help, labels }) => ({ name, kind, capability, help, labels: [...labels] })),
      workers: this.workerUrls.map(shownUrl),
      samples: since === undefined ? [...this.samples] : this.samples.filter((s) => Date.parse(s.at) > since),
    };
  }
}

/** A worker's metrics address as the dashboard shows it: a user name or password in it (basic auth) is left out. */
function shownUrl(url: string): string {
  try {
    const u = new URL(url);
    if (!u.username && !u.password) return url;
    u.username = '';
    u.password = '';
    return u.toString();
  } catch {
    return url.replace(/\/\/[^/@\s]*@/, '//');
  }
}

/** A scrape's error text with the address's credentials, if any, taken out (a fetch error may repeat the URL). */
function withoutCredentials(message: string, url: string): string {
  const shown = shownUrl(url);
  return shown === url ? message : message.split(url).join(shown);
}
