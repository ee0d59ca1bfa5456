import type { MemoryKindName, RecalledMemory } from './memory-activity-types';

/**
 * Pure recall logic: score, tier, rank, cap and format. No I/O, no clock of
 * its own (`now` is passed in), so it is tested exhaustively and could run
 * inside a workflow unchanged.
 */

export interface ScoredMemory {
  id: string;
  kind: MemoryKindName;
  text: string;
  similarity: number;
  /** Preferences: how often the user stated it; 1 for everything else. */
  weight: number;
  createdAt: Date;
  updatedAt: Date;
  origin: 'user' | 'tool_confirmed';
}

export interface RecallPolicy {
  strong: number;
  weak: number;
  maxStrong: number;
  maxStrongChars: number;
  maxWeak: number;
  maxWeakChars: number;
}

export interface RecallTiers {
  strong: RecalledMemory[];
  weak: RecalledMemory[];
  belowWeak: number;
  overCap: number;
}

export function cosine(a: Float32Array, b: Float32Array, normA?: number, normB?: number): number {
  if (a.length !== b.length || a.length === 0) return 0;
  let dot = 0;
  for (let i = 0; i < a.length; i++) dot += (a[i] as number) * (b[i] as number);
  const denominator = (normA ?? norm(a)) * (normB ?? norm(b));
  return denominator === 0 ? 0 : dot / denominator;
}

/** The vector scaled to length 1 (a zero vector stays zero), so cosine becomes a dot product. */
export function unitVector(v: ArrayLike<number>): Float32Array {
  const out = Float32Array.from(v);
  const length = norm(out);
  if (length > 0) for (let i = 0; i < out.length; i++) out[i] = (out[i] as number) / length;
  return out;
}

/**
 * Scores unit vectors against one query: cosine similarity as a dot product.
 * When most of the query's components are zero (the offline embedder's
 * hashed features), only the non-zero ones are visited, which makes scoring
 * thousands of memories several times cheaper; dense queries take the plain loop.
 */
export function queryScorer(query: ArrayLike<number>): (unit: Float32Array) => number {
  const q = unitVector(query);
  const nonZero: number[] = [];
  for (let i = 0; i < q.length; i++) if (q[i] !== 0) nonZero.push(i);
  if (nonZero.length * 2 < q.length) {
    const indices = Int32Array.from(nonZero);
    const weights = Float32Array.from(nonZero, (i) => q[i] as number);
    return (unit) => {
      if (unit.length !== q.length) return 0;
      let dot = 0;
      for (let k = 0; k < indices.length; k++) dot += (weights[k] as number) * (unit[indices[k] as number] as number);
      return dot;
    };
  }
  return (unit) => {
    if (unit.length !== q.length) return 0;
    let dot = 0;
    for (let i = 0; i < q.length; i++) dot += (q[i] as number) * (unit[i] as number);
    return dot;
  };
}

export function norm(v: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < v.length; i++) sum += (v[i] as number) * (v[i] as number);
  return Math.sqrt(sum);
}

// Each doubling of a preference's weight adds 0.03, at most 0.12: enough to
// order two similar matches, never enough to outrank a clearly better one.
const WEIGHT_BOOST_PER_DOUBLING = 0.03;
const MAX_WEIGHT_BOOST = 0.12;

/**
 * The ranking key. Weight raises rank within a tier but never moves a memory
 * across a threshold: tiers are decided on similarity alone, so the
 * thresholds keep the meaning they were calibrated with.
 */
export function rankScore(similarity: number, weight: number): number {
  const boost = Math.min(MAX_WEIGHT_BOOST, WEIGHT_BOOST_PER_DOUBLING * Math.log2(Math.max(1, weight)));
  return similarity + boost;
}

/**
 * Memory ids are `mem_` and 24 lowercase hex digits, for which code-point
 * order is the order `localeCompare` gives; but the first `localeCompare` of
 * a process loads ICU's collation data (about 20 ms), which a freshly started
 * worker's first recall paid.
 */
const compareIds = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Splits scored memories into strong and weak tiers, ranks each and applies the caps. */
export function recallTiers(scored: ScoredMemory[], policy: RecallPolicy, now: Date): RecallTiers {
  const ranked = scored
    .map((m) => ({ m, score: rankScore(m.similarity, m.weight) }))
    .sort((a, b) => b.score - a.score || b.m.updatedAt.getTime() - a.m.updatedAt.getTime() || compareIds(a.m.id, b.m.id));
  const strongPool = ranked.filter((r) => r.m.similarity >= policy.strong);
  const weakPool = ranked.filter((r) => r.m.similarity >= policy.weak && r.m.similarity < policy.strong);
  const belowWeak = ranked.length - strongPool.length - weakPool.length;

  // Line lengths are measured with the longest short id used in practice, so
  // assigning the real ids afterwards can only shorten them.
  const placeholder = 'xxxxxx';
  const pick = (pool: typeof ranked, tier: 'strong' | 'weak', maxCount: number, maxChars: number) => {
    const chosen: typeof ranked = [];
    let chars = 0;
    for (const r of pool) {
      if (chosen.length >= maxCount) break;
      const length = formatMemoryLine({ ...r.m, shortId: placeholder, tier }, now).length + 1;
      if (chars + length > maxChars) continue;
      chosen.push(r);
      chars += length;
    }
    return chosen;
  };
  const strong = pick(strongPool, 'strong', policy.maxStrong, policy.maxStrongChars);
  const weak = pick(weakPool, 'weak', policy.maxWeak, policy.maxWeakChars);
  const overCap = strongPool.length + weakPool.length - strong.length - weak.length;

  const shortIds = assignShortIds([...strong, ...weak].map((r) => r.m.id));
  const toRecalled = (r: (typeof ranked)[number], tier: 'strong' | 'weak'): RecalledMemory => {
    const shortId = shortIds.get(r.m.id) as string;
    return {
      id: r.m.id,
      shortId,
      kind: r.m.kind,
      tier,
      text: r.m.text,
      line: formatMemoryLine({ ...r.m, shortId, tier }, now),
      similarity: round4(r.m.similarity),
      score: round4(r.score),
      origin: r.m.origin,
      createdAt: r.m.createdAt.toISOString(),
      updatedAt: r.m.updatedAt.toISOString(),
    };
  };
  return {
    strong: strong.map((r) => toRecalled(r, 'strong')),
    weak: weak.map((r) => toRecalled(r, 'weak')),
    belowWeak,
    overCap,
  };
}

const round4 = (x: number): number => Math.round(x * 1e4) / 1e4;

/**
 * Short ids for citation: the first 4 hex digits of each id, lengthened (up to
 * the whole hash) only for ids that would otherwise collide in this set.
 */
export function assignShortIds(ids: string[]): Map<string, string> {
  const out = new Map<string, string>();
  let pending = [...new Set(ids)];
  for (let length = 4; pending.length > 0; length++) {
    const groups = new Map<string, string[]>();
    for (const id of pending) {
      const hex = id.replace(/^mem_/, '');
      const short = hex.slice(0, length);
      groups.set(short, [...(groups.get(short) ?? []), id]);
    }
    const next: string[] = [];
    for (const [short, members] of groups) {
      if (members.length === 1 || length >= 24) members.forEach((id, i) => out.set(id, members.length === 1 ? short : `${short}${i}`));
      else next.push(...members);
    }
    pending = next;
  }
  return out;
}

const UNITS: Array<[string, number]> = [
  ['year', 365 * 86_400_000],
  ['month', 30 * 86_400_000],
  ['week', 7 * 86_400_000],
  ['day', 86_400_000],
  ['hour', 3_600_000],
  ['minute', 60_000],
];

/** "just now", "5 minutes ago", "yesterday", "3 weeks ago", "2 years ago". */
export function formatAge(then: Date, now: Date): string {
  const ms = Math.max(0, now.getTime() - then.getTime());
  if (ms < 60_000) return 'just now';
  if (ms >= 86_400_000 && ms < 2 * 86_400_000) return 'yesterday';
  for (const [unit, size] of UNITS) {
    const n = Math.floor(ms / size);
    if (n >= 1) return `${n} ${unit}${n === 1 ? '' : 's'} ago`;
  }
  return 'just now';
}

export type LineAudience = 'model' | 'user';

/**
 * One memory as a line: `[mem:ab12] preference, 3 weeks ago (stated by the user): The user prefers concise answers.`
 * For the user's own view (`audience: 'user'`) the source reads "from you".
 */
export function formatMemoryLine(
  m: { shortId: string; kind: MemoryKindName; text: string; updatedAt: Date; origin: 'user' | 'tool_confirmed'; tier?: 'strong' | 'weak' },
  now: Date,
  audience: LineAudience = 'model',
): string {
  const source =
    audience === 'user'
      ? m.origin === 'user'
        ? 'from you'
        : 'from a tool, confirmed by you'
      : m.origin === 'user'
        ? 'stated by the user'
        : 'from a tool, confirmed by the user';
  const hedge = m.tier === 'weak' ? 'the user may have said: ' : '';
  return `[mem:${m.shortId}] ${m.kind}, ${formatAge(m.updatedAt, now)} (${source}): ${hedge}${oneLine(m.text)}`;
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

export const RECALL_REGION_OPEN = '<recalled_memories>';
export const RECALL_REGION_CLOSE = '</recalled_memories>';

/**
 * The labelled region that carries recalled memories into the context, apart
 * from the conversation. Empty when nothing was recalled, so no region at all
 * is injected.
 */
export function formatRecallRegion(strong: RecalledMemory[], weak: RecalledMemory[]): string {
  if (strong.length === 0 && weak.length === 0) return '';
  const lines = [
    RECALL_REGION_OPEN,
    'Long-term memories about this user from earlier sessions. They are not part of the current conversation, and the current conversation wins where they disagree.',
    'When your answer relies on one, cite its id in square brackets, e.g. [mem:' + (strong[0] ?? weak[0])?.shortId + ']. Never cite an id that is not listed here.',
  ];
  if (strong.length > 0) lines.push('Remembered:', ...strong.map((m) => m.line));
  if (weak.length > 0) lines.push('Possibly relevant, uncertain (the user may have said this; confirm before relying on it):', ...weak.map((m) => m.line));
  lines.push(RECALL_REGION_CLOSE);
  return lines.join('\n');
}
