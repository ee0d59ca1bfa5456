import { setTimeout as sleep } from 'node:timers/promises';
import type { FloorActivities } from './floor-workflow';

/** The floor's one activity, for both of its workers: the step back, after the model's latency when there is one. */
export const floorNoopActivity: FloorActivities['floorNoop'] = async (step, waitMs = 0) => {
  if (waitMs > 0) await sleep(waitMs);
  return step;
};
