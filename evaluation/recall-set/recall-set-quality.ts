import { embedMemories, type Embedder } from '../../activities/memory/embedder';
import { queryScorer, recallTiers, unitVector, type RecallPolicy, type ScoredMemory } from '../../activities/memory/recall';
import { MemoryState, namespaceLabel, type LabelledMemory, type RecallCase, type RecallSet } from './recall-set-types';

const DAY = 86_400_000;

/**
 * What a labelled state becomes in the store: `stale` is an active memory
 * past its expiry (the sweep has not run yet), the others their status. The
 * bench seeds exactly this, and the in-process evaluation filters on it the
 * way the repository's recall read does (`status: 'active', expiresAt > now`).
 */
export function storedState(state: MemoryState, now: Date): { status: 'active' | 'superseded' | 'deleted'; expiresAt: Date } {
  switch (state) {
    case MemoryState.Live:
      return { status: 'active', expiresAt: new Date(now.getTime() + 365 * DAY) };
    case MemoryState.Stale:
      return { status: 'active', expiresAt: new Date(now.getTime() - DAY) };
    case MemoryState.Superseded:
      return { status: 'superseded', expiresAt: new Date(now.getTime() + 365 * DAY) };
    case MemoryState.Deleted:
      return { status: 'deleted', expiresAt: new Date(now.getTime() + 365 * DAY) };
    default: {
      const never: never = state;
      throw new Error(`unknown memory state ${String(never)}`);
    }
  }
}

/** One case's recall, as label ids: strong tier first, then weak, each in rank order. */
export interface CaseOutcome {
  caseId: string;
  expected: string[];
  strong: string[];
  weak: string[];
}

/** Every similarity a case's eligible memories got (for threshold calibration). */
export interface CaseScores {
  caseId: string;
  expected: string[];
  scores: Array<{ id: string; similarity: number }>;
}

export interface QualityFigures {
  cases: number;
  /** Cases with at least one expected memory. */
  answerable: number;
  /** Of all strong-tier memories returned (answerable and unanswerable cases), the share that were expected; null when none came back strong. */
  precision_at_strong: number | null;
  strong_returned: number;
  /** Share of expected memories found among the first 5 returned (strong, then weak). */
  recall_at_5: number;
  /** Share of answerable cases whose first returned memory is expected. */
  top1_accuracy: number;
  /** Share of expected memories returned strong. */
  recall_at_strong: number;
  /** Share of cases with nothing expected that got nothing strong back. */
  unanswerable_clean: number;
  /** Weak-tier memories per case, on average: the hints' cost in attention. */
  weak_per_case: number;
  /** Stale, superseded, deleted or other-namespace memories returned: must be 0. */
  forbidden_returned: number;
}

const ratio = (n: number, d: number): number => (d === 0 ? 0 : Math.round((n / d) * 1e4) / 1e4);

export function qualityFigures(set: RecallSet, outcomes: CaseOutcome[]): QualityFigures {
  const byId = new Map(set.memories.map((m) => [m.id, m]));
  const caseById = new Map(set.cases.map((c) => [c.id, c]));
  let strongReturned = 0;
  let strongExpected = 0;
  let expectedTotal = 0;
  let expectedInTop5 = 0;
  let expectedStrong = 0;
  let answerable = 0;
  let top1 = 0;
  let unanswerable = 0;
  let clean = 0;
  let forbidden = 0;
  let weakReturned = 0;
  for (const o of outcomes) {
    weakReturned += o.weak.length;
    const c = caseById.get(o.caseId);
    const expected = new Set(o.expected);
    const ranked = [...o.strong, ...o.weak];
    for (const id of ranked) {
      const m = byId.get(id);
      if (!m || !c || m.state !== MemoryState.Live || namespaceLabel(m.namespace) !== namespaceLabel(c.namespace)) forbidden++;
    }
    strongReturned += o.strong.length;
    strongExpected += o.strong.filter((id) => expected.has(id)).length;
    if (expected.size === 0) {
      unanswerable++;
      if (o.strong.length === 0) clean++;
      continue;
    }
    answerable++;
    expectedTotal += expected.size;
    expectedInTop5 += ranked.slice(0, 5).filter((id) => expected.has(id)).length;
    expectedStrong += o.strong.filter((id) => expected.has(id)).length;
    if (ranked[0] !== undefined && expected.has(ranked[0])) top1++;
  }
  return {
    cases: outcomes.length,
    answerable,
    precision_at_strong: strongReturned === 0 ? null : ratio(strongExpected, strongReturned),
    strong_returned: strongReturned,
    recall_at_5: ratio(expectedInTop5, expectedTotal),
    top1_accuracy: ratio(top1, answerable),
    recall_at_strong: ratio(expectedStrong, expectedTotal),
    unanswerable_clean: ratio(clean, unanswerable),
    forbidden_returned: forbidden,
    weak_per_case: ratio(weakReturned, outcomes.length),
  };
}

/** The memories a case's recall may see: its own namespace's, active and unexpired, as the repository reads them. */
export function eligibleMemories(set: RecallSet, c: RecallCase, now: Date): LabelledMemory[] {
  const ns = namespaceLabel(c.namespace);
  return set.memories.filter((m) => {
    if (namespaceLabel(m.namespace) !== ns) return false;
    const stored = storedState(m.state, now);
    return stored.status === 'active' && stored.expiresAt > now;
  });
}

/** A set's vectors, keyed by text: queries embedded as asked, memories as the embedder embeds stored memories. */
export interface SetVectors {
  query: Map<string, Float32Array>;
  memory: Map<string, Float32Array>;
}

/** Embeds every query and memory text of the set once (unit vectors). */
export async function embedSet(set: RecallSet, embedder: Embedder): Promise<SetVectors> {
  const queries = [...new Set(set.cases.map((c) => c.query))];
  const memories = [...new Set(set.memories.map((m) => m.text))];
  const queryVectors = await embedder.embed(queries);
  const memoryVectors = await embedMemories(embedder, memories);
  return {
    query: new Map(queries.map((t, i) => [t, unitVector(queryVectors[i] ?? [])])),
    memory: new Map(memories.map((t, i) => [t, unitVector(memoryVectors[i] ?? [])])),
  };
}

/** Each case's eligible memories with their cosine similarity to the query, highest first. */
export function scoreCases(set: RecallSet, vectors: SetVectors, now: Date, cases: RecallCase[] = set.cases): CaseScores[] {
  return cases.map((c) => {
    const score = queryScorer(vectors.query.get(c.query) ?? []);
    const scores = eligibleMemories(set, c, now)
      .map((m) => ({ id: m.id, similarity: score(vectors.memory.get(m.text) ?? new Float32Array()) }))
      .sort((a, b) => b.similarity - a.similarity);
    return { caseId: c.id, expected: c.expected, scores };
  });
}

/**
 * The real recall ranking over scored memories: what `recallMemories` does
 * after its read (drop below weak, then `recallTiers` with the caps). All
 * memories share one age and weight here, as in the set nothing is reinforced.
 */
export function tierCase(set: RecallSet, scored: CaseScores, policy: RecallPolicy, now: Date): CaseOutcome {
  const byId = new Map(set.memories.map((m) => [m.id, m]));
  const candidates: ScoredMemory[] = scored.scores
    .filter((s) => s.similarity >= policy.weak)
    .map((s) => {
      const m = byId.get(s.id) as LabelledMemory;
      return { id: m.id, kind: m.kind, text: m.text, similarity: s.similarity, weight: 1, createdAt: now, updatedAt: now, origin: 'user' };
    });
  const tiers = recallTiers(candidates, policy, now);
  return { caseId: scored.caseId, expected: scored.expected, strong: tiers.strong.map((m) => m.id), weak: tiers.weak.map((m) => m.id) };
}
