import { CoreLegs, legMedians } from '../../bench/support/core-legs';

/** The moments `install()` notes when the SDK core hands the worker something or takes its answer; called directly here. */
type Noting = { note(worker: object, run: string, at: number, what: string): void };

const spin = (ms: number): void => {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // The main thread working, as an activation or an activity does.
  }
};
const wait = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

describe('bench:loop --legs (core-legs)', () => {
  it("tells a leg the main thread worked through from one it waited through (legs_main_thread_ms)", async () => {
    const legs = new CoreLegs();
    const note = (what: string) => (legs as unknown as Noting).note(worker, 'run-1', performance.now(), what);
    // A worker `install()` never saw: its moments go under the queue "unknown".
    const worker = {};
    note('activation (activity result)');
    spin(60);
    note('activation done');
    await wait(60);
    note('tool task');

    const { ms, mainThread } = legMedians(legs.legs('unknown'));
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
