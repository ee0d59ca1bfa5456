import type { RecallPolicy } from '../../activities/memory/recall';
import { qualityFigures, tierCase, type CaseScores, type QualityFigures } from './recall-set-quality';
import type { RecallSet } from './recall-set-types';

/**
 * The rule that turns an embedder's scores on the labelled recall set into
 * its thresholds (docs/memory.md, "Recall quality and thresholds"):
 *
 * - strong: the lowest value (0.01 steps) at which precision_at_strong is at
 *   least 0.9 there and at the next two steps up, so a strong memory, stated
 *   to the model as fact, is wrong at most one time in ten, and as many right
 *   memories as that allows are strong. No such value: the highest any
 *   memory of the set reaches, so nothing in the set is strong.
 * - weak: the highest value at or below strong whose top1_accuracy is within
 *   0.02 of the best any weak value gives. Lower would add hints (each one
 *   costs the model's attention) without putting the right memory first more often.
 */
export const PRECISION_TARGET = 0.9;
export const TOP1_TOLERANCE = 0.02;

export interface SweepRow extends QualityFigures {
  strong: number;
  weak: number;
}

export interface Calibration {
  strong: number;
  weak: number;
  /** The figures at the chosen pair. */
  at: SweepRow;
  /** Rows of the sweep, for the report: strong with weak at its chosen value, then weak under the chosen strong. */
  strongSweep: SweepRow[];
  weakSweep: SweepRow[];
}

const grid = (from: number, to: number): number[] => {
  const out: number[] = [];
  for (let k = Math.round(from * 100); k <= Math.round(to * 100); k++) out.push(k / 100);
  return out;
};

export function evaluateAt(set: RecallSet, scored: CaseScores[], base: Omit<RecallPolicy, 'strong' | 'weak'>, strong: number, weak: number, now: Date): SweepRow {
  const policy = { ...base, strong, weak };
  return { strong, weak, ...qualityFigures(set, scored.map((s) => tierCase(set, s, policy, now))) };
}

export function calibrateThresholds(set: RecallSet, scored: CaseScores[], base: Omit<RecallPolicy, 'strong' | 'weak'>, now: Date): Calibration {
  const top = Math.max(0, ...scored.flatMap((s) => s.scores.map((x) => x.similarity)));
  const ceiling = Math.min(1, Math.ceil(top * 100) / 100);
  // Strong does not depend on weak (tiers are split on similarity alone), so sweep it with weak = strong.
  const strongSweep = grid(0, ceiling).map((t) => evaluateAt(set, scored, base, t, t, now));
  const holds = (i: number) => [0, 1, 2].every((k) => {
    const row = strongSweep[i + k];
    return row === undefined || row.precision_at_strong === null || row.precision_at_strong >= PRECISION_TARGET;
  });
  const index = strongSweep.findIndex((row, i) => row.precision_at_strong !== null && holds(i));
  const strong = index >= 0 ? (strongSweep[index] as SweepRow).strong : ceiling;
  const weakSweep = grid(0, strong).map((w) => evaluateAt(set, scored, base, strong, w, now));
  const best = Math.max(...weakSweep.map((r) => r.top1_accuracy));
  const chosen = [...weakSweep].reverse().find((r) => r.top1_accuracy >= best - TOP1_TOLERANCE) as SweepRow;
  return { strong, weak: chosen.weak, at: chosen, strongSweep, weakSweep };
}
