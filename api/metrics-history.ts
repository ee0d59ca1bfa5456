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
 * tool). The page turns totals into rates between samples. A worker that does
 * not answer is named in the sample, and its series are left out of it.
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

/** Adds one scrape's catalog metrics to `into`, a row per label set of the catalog's labels. */
export function foldScrape(families: Map<string, Family>, into: Record<string, MetricRow[]>): void {
  for (const spec of Object.values(METRICS) as MetricSpec[]) {
    const family = families.get(spec.name);
    if (!family) continue;
    const rows = (into[spec.name] ??= []);
    for (const s of family.metrics) {
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

export class MetricsHistory {
  private readonly samples: MetricsSample[] = [];
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(
    private readonly workerUrls: string[],
    private readonly options: { everyMs: number; keep: number } = { everyMs: 10_000, keep: 360 },
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
    const scraped = await Promise.allSettled(this.workerUrls.map((url) => scrape(url, Math.min(5_000, this.options.everyMs))));
    scraped.forEach((r, i) => {
      if (r.status === 'fulfilled') foldScrape(r.value, metrics);
      else unreachable.push({ url: shownUrl(this.workerUrls[i]!), error: withoutCredentials(r.reason instanceof Error ? r.reason.message : String(r.reason), this.workerUrls[i]!) });
    });
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
