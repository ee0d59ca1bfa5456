import { setFlagsFromString } from 'node:v8';

/**
 * V8's budget before a function is considered for its optimizing compiler
 * (TurboFan), in bytes of bytecode run between checks: `--interrupt-budget`.
 * V8 11.3 (Node 20) defaults to 67,584. A worker runs a wide spread of code a
 * few times per step (the SDK's activity and payload code, the openai SDK,
 * undici, the MongoDB driver, zod): at V8's default much of it reaches
 * TurboFan late and is compiled on V8's helper threads long after the worker
 * starts (16 to 34 first compiles every ten turns after turn 50 of a
 * bench:loop session), which on a small machine takes cores from the steps. Eight times the budget (540,672) leaves such lukewarm code in
 * the baseline tiers, for 7 to 15% less CPU a step under many sessions, but
 * one-off work right after start (a namespace's first recall) runs
 * unoptimized longer. So the default leaves V8's budget alone
 * (docs/performance.md, "Lukewarm code and the optimizing compiler").
 */
export const DEFAULT_V8_INTERRUPT_BUDGET = 0;

let applied: number | undefined;

/**
 * Sets V8's interrupt budget for the whole process (every thread, every
 * worker in it), once per value; 0 leaves V8's own default. Returns the
 * budget now in force by our hand, or undefined when left alone.
 */
export function applyInterruptBudget(budget: number): number | undefined {
  if (!Number.isInteger(budget) || budget < 0) throw new RangeError(`V8 interrupt budget must be a non-negative integer, got ${String(budget)}`);
  if (budget === 0 || applied === budget) return applied;
  setFlagsFromString(`--interrupt-budget=${budget}`);
  applied = budget;
  return applied;
}
