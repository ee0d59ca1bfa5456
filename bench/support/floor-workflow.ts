import { proxyActivities, proxyLocalActivities } from '@temporalio/workflow';

export interface FloorActivities {
  /** Returns `step`, after `waitMs` when given (the model's latency, in bench:concurrency --model-ms). */
  floorNoop(step: number, waitMs?: number): Promise<number>;
}

const { floorNoop } = proxyActivities<FloorActivities>({ startToCloseTimeout: '10 seconds' });
const { floorNoop: floorNoopLocally } = proxyLocalActivities<FloorActivities>({ startToCloseTimeout: '10 seconds' });

/**
 * The Temporal floor for one ReAct turn, in the session's own shape: `steps`
 * model calls as regular activities with a tool call between each two as a
 * local activity (where the session runs a short read-only tool), and nothing
 * else. What the session workflow spends beyond this is its own. With
 * `modelMs`, each model call waits that long, as the session's calls wait on
 * a model that takes that long.
 */
export async function floorTurn(steps: number, modelMs = 0): Promise<void> {
  for (let step = 1; step <= steps; step++) {
    await (modelMs > 0 ? floorNoop(step, modelMs) : floorNoop(step));
    if (step < steps) await floorNoopLocally(step);
  }
}
