import { defaultThresholds, OfflineEmbedder, resolveThresholds } from '../../activities/memory/embedder';
import { cosine } from '../../activities/memory/recall';
import { calibrate, suggestThresholds } from '../../bench/memory-calibration';
import { CALIBRATION_PAIRS } from '../../bench/memory-calibration-pairs';

describe('recall thresholds', () => {
  it('the offline embedder defaults are what the documented rule derives from the labelled pairs', async () => {
    const embedder = new OfflineEmbedder();
    const result = await calibrate(embedder, CALIBRATION_PAIRS);
    const defaults = defaultThresholds(embedder.id);
    expect({ strong: defaults.strong, weak: defaults.weak }).toEqual({ strong: result.strong, weak: result.weak });
    // No unrelated pair is stated as remembered; at most 1 in 20 becomes even a hint.
    expect(result.falseAtStrong).toBe(0);
    expect(result.falseAtWeak).toBeLessThanOrEqual(0.05);
    expect(result.recallAtWeak).toBeGreaterThanOrEqual(0.6);
  });

  it('keeps the month-end travel plan away from an unrelated weekend request with the offline embedder', async () => {
    const embedder = new OfflineEmbedder();
    const [query, memory] = await embedder.embed(['Recommend weekend activities for a friend', 'The user is travelling at month end.']);
    const similarity = cosine(Float32Array.from(query ?? []), Float32Array.from(memory ?? []));
    expect(similarity).toBeLessThan(defaultThresholds(embedder.id).weak - 0.1);
  });

  it('uses the general defaults for other embedders and lets configuration override either threshold', () => {
    expect(defaultThresholds('openai:text-embedding-3-small')).toMatchObject({ strong: 0.72, weak: 0.5 });
    expect(resolveThresholds('openai:x', { weakThreshold: 0.4 })).toMatchObject({ strong: 0.72, weak: 0.4 });
  });

  it('derives thresholds with a margin over the unrelated scores, rounded up to 0.05', () => {
    expect(suggestThresholds([0.9], [0.1, 0.2, 0.33])).toEqual({ strong: 0.45, weak: 0.45 });
    const unrelated = Array.from({ length: 40 }, (_, i) => (i === 39 ? 0.4 : 0.05));
    expect(suggestThresholds([0.9], unrelated)).toEqual({ strong: 0.5, weak: 0.15 });
  });
});
