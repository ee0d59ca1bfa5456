import { median, ratioOfMediansInterval, seededRandom } from '../../bench/support/stats';

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

  it('keeps pairs together: a slowdown both contenders of a turn share does not widen it', () => {
    // Turns drift a lot (the machine's load); within a turn the two differ by a little noise of their own.
    const drift = noise(3, 60).map((x) => 30 + 15 * x);
    const own = noise(4, 60);
    const b = drift.map((d, i) => d + (own[i] as number));
    const a = drift.map((d, i) => 1.2 * d + (own[(i + 17) % 60] as number));
    const paired = ratioOfMediansInterval(a, b);
    // The same values with the pairs broken: each session turn beside another turn's floor.
    const broken = ratioOfMediansInterval(a, [...b].reverse());
    expect(paired[1] - paired[0]).toBeLessThan((broken[1] - broken[0]) / 3);
    expect(paired[0]).toBeLessThan(1.2);
    expect(paired[1]).toBeGreaterThan(1.2);
  });

  it('holds the true ratio of the medians in about 95% of samples', () => {
    // 200 runs of 40 turns, each contender's step uniform around its median (36 and 30 ms: a true ratio of 1.2).
    const draw = seededRandom(20261203);
    let held = 0;
    const runs = 200;
    for (let run = 0; run < runs; run++) {
      const a = Array.from({ length: 40 }, () => 36 + 12 * (draw() - 0.5));
      const b = Array.from({ length: 40 }, () => 30 + 12 * (draw() - 0.5));
      const [lo, hi] = ratioOfMediansInterval(a, b, { resamples: 500, seed: run + 1 });
      if (lo <= 1.2 && 1.2 <= hi) held++;
    }
    // Seeded, so always the same count: 0.95 here. The 5th to 95th percentiles (a 90% interval) hold it in
    // 0.915 of these runs and the 25th to 75th in 0.56.
    expect(held / runs).toBeGreaterThanOrEqual(0.93);
    expect(held / runs).toBeLessThanOrEqual(0.99);
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
