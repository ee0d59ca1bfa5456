import { proxyActivities } from '@temporalio/workflow';

export interface FloorActivities {
  floorNoop(step: number): Promise<number>;
}

const { floorNoop } = proxyActivities<FloorActivities>({ startToCloseTimeout: '10 seconds' });

/**
 * The Temporal floor for one ReAct turn: the same sequence of activity round
 * trips as `steps` model calls with a tool call between each two, and nothing
 * else. What the session workflow spends beyond this is its own.
 */
export async function floorTurn(steps: number): Promise<void> {
  for (let step = 1; step <= steps; step++) {
    await floorNoop(step);
    if (step < steps) await floorNoop(step);
  }
}
