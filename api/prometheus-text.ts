import parsePrometheusTextFormat from 'parse-prometheus-text-format';

/** One sample of a scrape: a family's value for one label set (histograms: count and sum). */
export interface Sample {
  labels: Record<string, string>;
  value?: number;
  count?: number;
  sum?: number;
  buckets?: Record<string, number>;
}

export interface Family {
  name: string;
  help: string;
  type: string;
  metrics: Sample[];
}

/** Scrapes a Prometheus endpoint and parses it (within `timeoutMs`). */
export async function scrape(url: string, timeoutMs = 5_000): Promise<Map<string, Family>> {
  // fetch refuses a URL with credentials in it: a basic-auth user and password go in the Authorization header.
  const target = new URL(url);
  const headers: Record<string, string> = {};
  if (target.username || target.password) {
    headers.authorization = `Basic ${Buffer.from(`${decodeURIComponent(target.username)}:${decodeURIComponent(target.password)}`).toString('base64')}`;
    target.username = '';
    target.password = '';
  }
  const res = await fetch(target, { headers, signal: AbortSignal.timeout(timeoutMs) });
  if (res.status !== 200) {
    await res.body?.cancel().catch(() => undefined);
    throw new Error(`GET ${url}: ${res.status}`);
  }
  return parseExposition(await boundedText(res, MAX_SCRAPE_BYTES, url));
}

/** The most a /metrics answer may hold: a worker's is tens of KB; past this it is not a worker's. */
export const MAX_SCRAPE_BYTES = 16 * 1024 * 1024;

/** The body as text, read no further than `max` bytes (an endpoint that sends gigabytes is cut off, not buffered). */
async function boundedText(res: Response, max: number, url: string): Promise<string> {
  if (!res.body) return '';
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    bytes += value.byteLength;
    if (bytes > max) {
      await reader.cancel().catch(() => undefined);
      throw new Error(`GET ${url}: the answer is over ${max} bytes; a worker's metrics are far smaller`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

type RawFamily = { name: string; help: string; type: string; metrics: Array<{ labels?: Record<string, string>; value?: string }> };

/**
 * Prometheus text exposition, parsed by family name. Samples are parsed by
 * parse-prometheus-text-format (a port of the Python client's parser); its
 * histogram grouping keeps one label set only, so histograms are read as
 * their `_bucket`, `_count` and `_sum` series and put together here, per
 * label set.
 */
export function parseExposition(text: string): Map<string, Family> {
  const declared = new Map<string, string>();
  const untyped = text.replace(/^# TYPE (\S+) (\S+)[ \t]*$/gm, (line, name: string, type: string) => {
    declared.set(name, type.toLowerCase());
    return type.toLowerCase() === 'histogram' ? `# TYPE ${name} untyped` : line;
  });
  const out = new Map<string, Family>();
  const histogramOf = (name: string): [string, 'bucket' | 'count' | 'sum'] | undefined => {
    const m = /^(.*)_(bucket|count|sum)$/.exec(name);
    return m && declared.get(m[1]!) === 'histogram' ? [m[1]!, m[2] as 'bucket' | 'count' | 'sum'] : undefined;
  };
  for (const raw of parsePrometheusTextFormat(untyped) as RawFamily[]) {
    const part = histogramOf(raw.name);
    if (!part) {
      if (declared.get(raw.name) === 'histogram') {
        const f = out.get(raw.name) ?? { name: raw.name, help: raw.help, type: 'histogram', metrics: [] };
        f.help = raw.help;
        out.set(raw.name, f);
        continue;
      }
      out.set(raw.name, {
        name: raw.name,
        help: raw.help,
        type: (declared.get(raw.name) ?? 'untyped').toLowerCase(),
        metrics: raw.metrics.map((m) => ({ labels: m.labels ?? {}, value: Number(m.value) })),
      });
      continue;
    }
    const [base, kind] = part;
    const family = out.get(base) ?? { name: base, help: '', type: 'histogram', metrics: [] };
    out.set(base, family);
    for (const m of raw.metrics) {
      const { le, ...labels } = m.labels ?? {};
      const key = JSON.stringify(Object.entries(labels).sort(([a], [b]) => a.localeCompare(b)));
      let sample = family.metrics.find((x) => JSON.stringify(Object.entries(x.labels).sort(([a], [b]) => a.localeCompare(b))) === key);
      if (!sample) {
        sample = { labels, buckets: {} };
        family.metrics.push(sample);
      }
      const value = Number(m.value);
      if (kind === 'bucket' && le !== undefined) sample.buckets![le] = value;
      else if (kind === 'count') sample.count = value;
      else if (kind === 'sum') sample.sum = value;
    }
  }
  return out;
}

/** The samples of `name` whose labels include `where`, summed (value, or count for histograms). */
export function total(families: Map<string, Family>, name: string, where: Record<string, string>, field: 'value' | 'count' | 'sum' = 'value'): number {
  const f = families.get(name);
  if (!f) return 0;
  return f.metrics.filter((m) => Object.entries(where).every(([k, v]) => m.labels[k] === v)).reduce((n, m) => n + (m[field] ?? 0), 0);
}
