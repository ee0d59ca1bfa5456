import { METRICS, type Capability, type MetricSpec } from '../workflows/metric-catalog';
import { scrape, type Family } from './prometheus-text';

/*
 * The dashboard's data: the workers' metrics scraped every `everyMs` and kept
 * for the last `keep` samples, in memory. Each sample holds, per catalog
 * metric, the sum over workers and task queues of its series, split by the
 * metric's first label (outcome, status, tier, ...): counters as their
 * running totals, histograms as count and sum. The page turns totals into
 * rates between samples. A worker that does not answer is named in the
 * sample, and its series are left out of it.
 */

export interface MetricPoint {
  /** By the metric's first label's value ('' when it has none): counter total or gauge value. */
  values: Record<string, number>;
  /** Histograms: observations and their sum, by the first label's value. */
  count?: Record<string, number>;
  sum?: Record<string, number>;
}

export interface MetricsSample {
  at: string;
  metrics: Record<string, MetricPoint>;
  /** Worker endpoints that did not answer this time, with why. */
  unreachable: Array<{ url: string; error: string }>;
}

export interface MetricsSeries {
  everyMs: number;
  catalog: Array<{ name: string; kind: MetricSpec['kind']; capability: Capability; help: string; labels: string[] }>;
  workers: string[];
  samples: MetricsSample[];
}

function fold(families: Map<string, Family>, into: Record<string, MetricPoint>): void {
  for (const spec of Object.values(METRICS) as MetricSpec[]) {
    const family = families.get(spec.name);
    if (!family) continue;
    const point = (into[spec.name] ??= { values: {} });
    const key = spec.labels[0];
    for (const s of family.metrics) {
      const k = key ? (s.labels[key] ?? '') : '';
      if (spec.kind === 'histogram') {
        point.count ??= {};
        point.sum ??= {};
        point.count[k] = (point.count[k] ?? 0) + (s.count ?? 0);
        point.sum[k] = (point.sum[k] ?? 0) + (s.sum ?? 0);
      } else {
        point.values[k] = (point.values[k] ?? 0) + (s.value ?? 0);
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
    const metrics: Record<string, MetricPoint> = {};
    const unreachable: MetricsSample['unreachable'] = [];
    const scraped = await Promise.allSettled(this.workerUrls.map((url) => scrape(url, Math.min(5_000, this.options.everyMs))));
    scraped.forEach((r, i) => {
      if (r.status === 'fulfilled') fold(r.value, metrics);
      else unreachable.push({ url: this.workerUrls[i]!, error: r.reason instanceof Error ? r.reason.message : String(r.reason) });
    });
    this.samples.push({ at: new Date().toISOString(), metrics, unreachable });
    if (this.samples.length > this.options.keep) this.samples.splice(0, this.samples.length - this.options.keep);
  }

  series(): MetricsSeries {
    return {
      everyMs: this.options.everyMs,
      catalog: (Object.values(METRICS) as MetricSpec[]).map(({ name, kind, capability, help, labels }) => ({ name, kind, capability, help, labels: [...labels] })),
      workers: this.workerUrls,
      samples: [...this.samples],
    };
  }
}
