import { createServer } from 'node:net';

/** A port the OS says is free now, for the worker's Prometheus exporter. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Sum and count of each histogram, summed over label sets that pass `keep`. */
export type HistogramTotals = Map<string, { sum: number; count: number }>;

/**
 * Reads the worker runtime's Prometheus page and totals the histograms named
 * in `names`, keyed `name` or `name{label=value}` when `by` names a label,
 * after the spec's `prefix`.
 */
export async function scrapeHistograms(
  port: number,
  names: Array<{ name: string; by?: string; where?: Record<string, string>; prefix?: string }>,
): Promise<HistogramTotals> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const totals: HistogramTotals = new Map();
  for (const line of text.split('\n')) {
    const m = /^([a-z_]+)_(sum|count)(?:\{([^}]*)\})? ([0-9.eE+-]+)$/.exec(line.trim());
    if (!m) continue;
    const [, base, kind, rawLabels, value] = m as unknown as [string, string, 'sum' | 'count', string | undefined, string];
    const labels = Object.fromEntries([...(rawLabels ?? '').matchAll(/([a-z_]+)="([^"]*)"/g)].map((l) => [l[1], l[2]]));
    for (const spec of names) {
      if (base !== spec.name) continue;
      if (spec.where && Object.entries(spec.where).some(([k, v]) => labels[k] !== v)) continue;
      const key = `${spec.prefix ?? ''}${spec.by ? `${base}{${spec.by}=${labels[spec.by] ?? ''}}` : base}`;
      const entry = totals.get(key) ?? { sum: 0, count: 0 };
      entry[kind] += Number(value);
      totals.set(key, entry);
    }
  }
  return totals;
}

/** `after - before`, per key. */
export function diffTotals(after: HistogramTotals, before: HistogramTotals): HistogramTotals {
  const out: HistogramTotals = new Map();
  for (const [key, a] of after) {
    const b = before.get(key) ?? { sum: 0, count: 0 };
    out.set(key, { sum: a.sum - b.sum, count: a.count - b.count });
  }
  return out;
}
