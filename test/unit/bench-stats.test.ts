import { median, ratioOfMediansInterval } from '../../bench/support/stats';

/** Deterministic pseudo-noise in [-1, 1), so the samples are the same on every run. */
function noise(seed: number, n: number): number[] {
  let s = seed;
  return Array.from({ length: n }, () => {
    s = (s * 1103515245 + 12345) % 2147483648;
    return (s / 2147483648) * 2 - 1;
  });
}

describe('ratioOfMediansInterval (bench:loop floor_ratio_ci95)', () => {
  it('is the ratio itself when every pair has the same ratio', () => {
    const b = noise(1, 50).map((x) => 30 + 5 * x);
    const a = b.map((x) => 1.25 * x);
    const [lo, hi] = ratioOfMediansInterval(a, b);
    expect(lo).toBeCloseTo(1.25, 10);
    expect(hi).toBeCloseTo(1.25, 10);
  });

  it('holds the ratio of the medians of noisy samples, and narrows with three times the turns', () => {
    const interval = (n: number) => {
      const b = noise(7, n).map((x) => 30 + 6 * x);
      const a = noise(11, n).map((x) => 36 + 6 * x);
      return { ratio: median(a) / median(b), ci: ratioOfMediansInterval(a, b) };
    };
    const short = interval(40);
    const long = interval(120);
    for (const { ratio, ci } of [short, long]) {
      expect(ci[0]).toBeLessThan(ratio);
      expect(ci[1]).toBeGreaterThan(ratio);
      expect(ci[0]).toBeLessThan(1.2);
      expect(ci[1]).toBeGreaterThan(1.2);
    }
    expect(long.ci[1] - long.ci[0]).toBeLessThan(0.75 * (short.ci[1] - short.ci[0]));
  });

  it('keeps pairs together: turns slowed alike for both contenders do not widen it', () => {
    const drift = noise(3, 60).map((x) => 30 + 15 * x);
    const paired = ratioOfMediansInterval(
      drift.map((x) => 1.2 * x),
      drift,
    );
    expect(paired[1] - paired[0]).toBeLessThan(1e-9);
  });

  it('gives the same interval for the same samples and seed, another for another seed', () => {
    const b = noise(5, 40).map((x) => 30 + 6 * x);
    const a = noise(9, 40).map((x) => 36 + 6 * x);
    expect(ratioOfMediansInterval(a, b)).toEqual(ratioOfMediansInterval(a, b));
    expect(ratioOfMediansInterval(a, b, { seed: 2 })).not.toEqual(ratioOfMediansInterval(a, b));
  });

  it('refuses samples that are not paired', () => {
    expect(() => ratioOfMediansInterval([1, 2, 3], [1, 2])).toThrow('paired samples differ in length: 3 and 2');
  });
});
