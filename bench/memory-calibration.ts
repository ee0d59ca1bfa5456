import { embedMemories, type Embedder } from '../activities/memory/embedder';
import { cosine } from '../activities/memory/recall';
import type { CalibrationPair } from './memory-calibration-pairs';
import { round } from './support/stats';

/**
 * The rule that turns an embedder's scores on the labelled pairs into recall
 * thresholds (docs/memory.md, "Thresholds"):
 *
 * - strong: no unrelated pair reaches it, with a 0.1 margin over the highest
 *   unrelated score, because a strong memory is stated to the model as fact;
 * - weak: at least 95% of unrelated pairs fall below it, again with a 0.1
 *   margin, because a weak memory is only a hint but still costs attention.
 *
 * Both are rounded up to a multiple of 0.05 so small changes to the set do not move them.
 */
export const MARGIN = 0.1;

export interface Calibration {
  embedderId: string;
  strong: number;
  weak: number;
  related: number[];
  unrelated: number[];
  /** Share of related pairs at or above each threshold. */
  recallAtStrong: number;
  recallAtWeak: number;
  /** Share of unrelated pairs at or above each threshold. */
  falseAtStrong: number;
  falseAtWeak: number;
}

const ceil05 = (x: number): number => Math.ceil(Math.round(x * 1e6) / 1e6 / 0.05) * 0.05;

export function quantile(sorted: number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number;
}

export function suggestThresholds(related: number[], unrelated: number[]): { strong: number; weak: number } {
  const sorted = [...unrelated].sort((a, b) => a - b);
  const strong = round(ceil05(Math.max(...sorted) + MARGIN));
  const weak = round(Math.min(strong, ceil05(quantile(sorted, 0.95) + MARGIN)));
  return { strong, weak };
}

export async function calibrate(embedder: Embedder, pairs: CalibrationPair[]): Promise<Calibration> {
  // Memories are embedded as the embedder embeds stored memories, queries as asked.
  const queries = [...new Set(pairs.map((p) => p.query))];
  const memories = [...new Set(pairs.map((p) => p.memory))];
  const queryVectors = await embedder.embed(queries);
  const memoryVectors = await embedMemories(embedder, memories);
  const queryOf = new Map(queries.map((t, i) => [t, Float32Array.from(queryVectors[i] ?? [])]));
  const memoryOf = new Map(memories.map((t, i) => [t, Float32Array.from(memoryVectors[i] ?? [])]));
  const score = (p: CalibrationPair) => cosine(queryOf.get(p.query) as Float32Array, memoryOf.get(p.memory) as Float32Array);
  const related = pairs.filter((p) => p.related).map(score);
  const unrelated = pairs.filter((p) => !p.related).map(score);
  const { strong, weak } = suggestThresholds(related, unrelated);
  const share = (xs: number[], t: number) => xs.filter((x) => x >= t).length / xs.length;
  return {
    embedderId: embedder.id,
    strong,
    weak,
    related,
    unrelated,
    recallAtStrong: share(related, strong),
    recallAtWeak: share(related, weak),
    falseAtStrong: share(unrelated, strong),
    falseAtWeak: share(unrelated, weak),
  };
}
