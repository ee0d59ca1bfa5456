import { proxyActivities } from '@temporalio/workflow';
import type { SessionActivities } from '../activities/activity-types';

const { expireArchives } = proxyActivities<SessionActivities>({
  startToCloseTimeout: '5 minutes',
  retry: { maximumAttempts: 5, initialInterval: '5 seconds' },
});

export interface MaintenanceResult {
  expiredArchives: number;
}

/**
 * Run by a Temporal Schedule: marks archived sessions past their retention as
 * expired and purges their content. (FerretDB has no TTL indexes, so expiry
 * is a sweep rather than an index option; it works the same on MongoDB.)
 */
export async function maintenanceSweep(): Promise<MaintenanceResult> {
  const archives = await expireArchives({});
  return { expiredArchives: archives.expired };
}
