import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { applyInterruptBudget } from '../../workers/v8-tiering';

/** Calls before a small function heads for TurboFan, in a fresh process with `budget` applied (or V8's default). */
function callsToOptimize(budget: string): number {
  const out = execFileSync(process.execPath, ['--allow-natives-syntax', '--import', 'tsx', join(__dirname, '../support/tiering-probe.ts'), budget], { encoding: 'utf8' });
  return (JSON.parse(out.trim().split('\n').pop() as string) as { calls: number }).calls;
}

describe("V8's interrupt budget for the worker process", () => {
  it('takes effect when set at run time: code runs longer before it is optimized', () => {
    const byDefault = callsToOptimize('default');
    const eightTimes = callsToOptimize('540672');
    expect(byDefault).toBeGreaterThan(0);
    expect(eightTimes).toBeGreaterThan(byDefault * 4);
    // 0 leaves V8's own budget.
    const left = callsToOptimize('0');
    expect(left).toBeLessThan(eightTimes / 4);
  }, 60_000);

  it('refuses a budget that is not a non-negative integer', () => {
    expect(() => applyInterruptBudget(-1)).toThrow(/non-negative integer, got -1/);
    expect(() => applyInterruptBudget(1.5)).toThrow(/got 1.5/);
  });
});
