import { proxyActivities, proxyLocalActivities } from '@temporalio/workflow';

export interface FloorActivities {
  floorNoop(step: number): Promise<number>;
}

const { floorNoop } = proxyActivities<FloorActivities>({ startToCloseTimeout: '10 seconds' });
const { floorNoop: floorNoopLocally } = proxyLocalActivities<FloorActivities>({ startToCloseTimeout: '10 seconds' });

/**
 * The Temporal floor for one ReAct turn, in the session's own shape: `steps`
 * model calls as regular activities with a tool call between each two as a
 * local activity (where the session runs a short read-only tool), and nothing
 * else. What the session workflow spends beyond this is its own.
 */
export async function floorTurn(steps: number): Promise<void> {
  for (let step = 1; step <= steps; step++) {
    await floorNoop(step);
    if (step < steps) await floorNoopLocally(step);
  }
}
