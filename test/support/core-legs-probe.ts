/**
 * Run as `node --import tsx core-legs-probe.ts`: notes the moments of five
 * runs, each with the main thread spinning through one leg and waiting on a
 * timer through the next, and prints the legs' medians (`legMedians`) as JSON.
 * Its own process, so nothing else on the main thread (a jest worker's
 * leftover work from another file, its collector) lands inside the wait.
 */
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

async function main(): Promise<void> {
  // The event loop's active time reads 0 until the loop has started; start it first.
  await new Promise<void>((resolve) => setImmediate(resolve));
  const legs = new CoreLegs();
  // A worker `install()` never saw: its moments go under the queue "unknown".
  const worker = {};
  // Five runs, so a median stands for each leg: on a loaded machine one wait can take in work the probe did not do.
  for (let run = 1; run <= 5; run++) {
    const note = (what: string) => (legs as unknown as Noting).note(worker, `run-${run}`, performance.now(), what);
    note('activation (activity result)');
    spin(60);
    note('activation done');
    await wait(60);
    note('tool task');
  }
  process.stdout.write(JSON.stringify(legMedians(legs.legs('unknown'))));
}

void main();
