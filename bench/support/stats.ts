/** Nearest-rank percentile of `values` (0 < p <= 100); NaN when empty. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1] as number;
}

export const median = (values: readonly number[]): number => percentile(values, 50);

export function round(value: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

/** A small deterministic generator of uniform numbers in [0, 1) (mulberry32): the same seed, the same draws (benchmark intervals, randomized tests). */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * A 95% interval for `median(a) / median(b)` where `a[i]` and `b[i]` were
 * measured side by side (one turn of each contender, run one after the
 * other): the percentile bootstrap, drawing turn indices with replacement so
 * each draw keeps its pairs. One run's ratio moves with the turns it
 * happened to time; the interval says how far.
 */
export function ratioOfMediansInterval(
  a: readonly number[],
  b: readonly number[],
  { resamples = 2_000, seed = 1 }: { resamples?: number; seed?: number } = {},
): [number, number] {
  if (a.length !== b.length) throw new Error(`paired samples differ in length: ${a.length} and ${b.length}`);
  if (a.length === 0) return [Number.NaN, Number.NaN];
  const next = seededRandom(seed);
  const n = a.length;
  const drawnA = new Array<number>(n);
  const drawnB = new Array<number>(n);
  const ratios = new Array<number>(resamples);
  for (let r = 0; r < resamples; r++) {
    for (let i = 0; i < n; i++) {
      const at = Math.floor(next() * n);
      drawnA[i] = a[at] as number;
      drawnB[i] = b[at] as number;
    }
    ratios[r] = median(drawnA) / median(drawnB);
  }
  return [percentile(ratios, 2.5), percentile(ratios, 97.5)];
}
