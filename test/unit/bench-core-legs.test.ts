import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { CoreLegs, legMedians } from '../../bench/support/core-legs';

/** The moments `install()` notes when the SDK core hands the worker something or takes its answer; called directly here. */
type Noting = { note(worker: object, run: string, at: number, what: string): void };

describe('bench:loop --legs (core-legs)', () => {
  it("tells a leg the main thread worked through from one it waited through (legs_main_thread_ms)", () => {
    const out = execFileSync(process.execPath, ['--import', 'tsx', join(__dirname, '../support/core-legs-probe.ts')], { encoding: 'utf8' });
    const { ms, mainThread } = JSON.parse(out) as ReturnType<typeof legMedians>;
    const worked = 'activation (activity result) -> activation done';
    const waited = 'activation done -> tool task';
    expect(ms[worked]).toBeGreaterThanOrEqual(59);
    expect(ms[waited]).toBeGreaterThanOrEqual(55);
    // Busy for nearly all of the spin, for little of the wait.
    expect(mainThread[worked]).toBeGreaterThanOrEqual(50);
    expect(mainThread[waited]).toBeLessThan(20);
    // A leg no run went through has no median.
    expect(ms['tool task -> tool done']).toBeNull();
    expect(mainThread['tool task -> tool done']).toBeNull();
  });

  it('keeps each run apart: a leg is two moments of the same run', () => {
    const legs = new CoreLegs();
    const noting = legs as unknown as Noting;
    const worker = {};
    noting.note(worker, 'run-a', 0, 'activation (activity result)');
    noting.note(worker, 'run-b', 5, 'activation (activity result)');
    noting.note(worker, 'run-a', 10, 'activation done');
    noting.note(worker, 'run-b', 35, 'activation done');
    const leg = legs.legs('unknown').get('activation (activity result) -> activation done');
    expect(leg?.ms).toEqual([10, 30]);
  });
});
