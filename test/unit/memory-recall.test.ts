import { assignShortIds, formatAge, formatMemoryLine, formatRecallRegion, rankScore, recallTiers, type RecallPolicy, type ScoredMemory } from '../../activities/memory/recall';

const now = new Date('2025-06-01T12:00:00Z');
const DAY = 86_400_000;

let counter = 0;
function memory(similarity: number, extra: Partial<ScoredMemory> = {}): ScoredMemory {
  counter++;
  const hex = counter.toString(16).padStart(4, '0');
  return {
    id: `mem_${hex}${'0'.repeat(20)}`,
    kind: 'fact',
    text: `memory ${counter}`,
    similarity,
    weight: 1,
    createdAt: new Date(now.getTime() - 21 * DAY),
    updatedAt: new Date(now.getTime() - 21 * DAY),
    origin: 'user',
    ...extra,
  };
}

const policy: RecallPolicy = { strong: 0.72, weak: 0.5, maxStrong: 5, maxStrongChars: 10_000, maxWeak: 5, maxWeakChars: 10_000 };

describe('recall tiers', () => {
  it('puts memories at or above the strong threshold in the strong tier, between the thresholds in the weak tier, and drops the rest', () => {
    const tiers = recallTiers([memory(0.9), memory(0.72), memory(0.71), memory(0.5), memory(0.49), memory(0.1)], policy, now);
    expect(tiers.strong.map((m) => m.similarity)).toEqual([0.9, 0.72]);
    expect(tiers.weak.map((m) => m.similarity)).toEqual([0.71, 0.5]);
    expect(tiers.belowWeak).toBe(2);
    expect(tiers.strong.every((m) => m.tier === 'strong') && tiers.weak.every((m) => m.tier === 'weak')).toBe(true);
  });

  it('ranks a reinforced preference above a slightly closer single mention, without moving it across a threshold', () => {
    const heavy = memory(0.78, { kind: 'preference', weight: 8 });
    const light = memory(0.8);
    const tiers = recallTiers([light, heavy], policy, now);
    expect(tiers.strong.map((m) => m.id)).toEqual([heavy.id, light.id]);
    expect(rankScore(0.78, 8)).toBeCloseTo(0.87);
    // Weight never promotes a weak match to the strong tier.
    const weakButHeavy = recallTiers([memory(0.7, { kind: 'preference', weight: 100 })], policy, now);
    expect(weakButHeavy.strong).toHaveLength(0);
    expect(weakButHeavy.weak).toHaveLength(1);
  });

  it('caps each tier by count and by characters', () => {
    const many = Array.from({ length: 10 }, (_, i) => memory(0.95 - i * 0.01, { text: 'x'.repeat(50) }));
    const byCount = recallTiers(many, { ...policy, maxStrong: 3 }, now);
    expect(byCount.strong).toHaveLength(3);
    expect(byCount.overCap).toBe(7);
    const lineLength = byCount.strong[0]?.line.length ?? 0;
    const byChars = recallTiers(many, { ...policy, maxStrongChars: lineLength * 2 + 10 }, now);
    expect(byChars.strong).toHaveLength(2);
    expect(byChars.strong.reduce((n, m) => n + m.line.length + 1, 0)).toBeLessThanOrEqual(lineLength * 2 + 10);
  });

  it('formats each memory with its short id, kind, age and source', () => {
    const [m] = recallTiers([memory(0.9, { kind: 'preference', text: 'The user prefers concise answers.' })], policy, now).strong;
    expect(m?.line).toBe(`[mem:${m?.shortId}] preference, 3 weeks ago (stated by the user): The user prefers concise answers.`);
    const userView = formatMemoryLine({ shortId: 'ab12', kind: 'preference', text: 'prefers concise answers', updatedAt: new Date(now.getTime() - 21 * DAY), origin: 'user' }, now, 'user');
    expect(userView).toBe('[mem:ab12] preference, 3 weeks ago (from you): prefers concise answers');
    const [weak] = recallTiers([memory(0.6, { origin: 'tool_confirmed', text: 'The user lives in Lisbon.' })], policy, now).weak;
    expect(weak?.line).toMatch(/^\[mem:[0-9a-f]{4,}\] fact, 3 weeks ago \(from a tool, confirmed by the user\): the user may have said: The user lives in Lisbon\.$/);
  });

  it('gives short ids of 4 hex digits, longer only where two would collide', () => {
    const ids = ['mem_ab12aaaaaaaaaaaaaaaaaaaa', 'mem_ab12bbbbbbbbbbbbbbbbbbbb', 'mem_cd34cccccccccccccccccccc'];
    const short = assignShortIds(ids);
    expect(short.get(ids[2] as string)).toBe('cd34');
    expect(short.get(ids[0] as string)).toBe('ab12a');
    expect(short.get(ids[1] as string)).toBe('ab12b');
    expect(new Set(short.values()).size).toBe(3);
  });

  it('says how old a memory is in words', () => {
    const ago = (ms: number) => formatAge(new Date(now.getTime() - ms), now);
    expect(ago(10_000)).toBe('just now');
    expect(ago(5 * 60_000)).toBe('5 minutes ago');
    expect(ago(3 * 3_600_000)).toBe('3 hours ago');
    expect(ago(1.5 * DAY)).toBe('yesterday');
    expect(ago(4 * DAY)).toBe('4 days ago');
    expect(ago(21 * DAY)).toBe('3 weeks ago');
    expect(ago(70 * DAY)).toBe('2 months ago');
    expect(ago(400 * DAY)).toBe('1 year ago');
  });

  it('puts recalled memories in their own labelled region, and none at all when nothing was recalled', () => {
    const tiers = recallTiers([memory(0.9), memory(0.6)], policy, now);
    const region = formatRecallRegion(tiers.strong, tiers.weak);
    expect(region.startsWith('<recalled_memories>')).toBe(true);
    expect(region.endsWith('</recalled_memories>')).toBe(true);
    expect(region).toContain('Remembered:');
    expect(region).toContain('Possibly relevant');
    expect(formatRecallRegion([], [])).toBe('');
  });
});
