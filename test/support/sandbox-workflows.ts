import { condition, defineSignal, setHandler, sleep } from '@temporalio/workflow';

/*
 * Workflows for test/integration/workflow-sandbox.test.ts: one whose code
 * never yields, and one that waits on signals and conditions across many
 * activations, to show the thread that caught the first still runs the other.
 */

export const add = defineSignal<[number]>('add');

/** Never yields: its workflow task can only end by the deadlock check. */
export async function spin(): Promise<number> {
  let turns = 0;
  let spinning = true;
  while (spinning) {
    turns += 1;
    if (turns < 0) spinning = false;
  }
  return turns;
}

/** Sums `count` add signals, then sleeps a moment (a timer, another activation) and returns the sum. */
export async function addUp(count: number): Promise<number> {
  let total = 0;
  let seen = 0;
  setHandler(add, (n) => {
    total += n;
    seen += 1;
  });
  await condition(() => seen >= count);
  await sleep(5);
  return total;
}
