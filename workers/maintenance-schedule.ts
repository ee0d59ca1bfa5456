import { Client, Connection, ScheduleAlreadyRunning, ScheduleOverlapPolicy } from '@temporalio/client';
import type { DataConverter } from '@temporalio/common';
import type { TemporalTransportOptions } from './temporal-connection-options';

export const maintenanceScheduleId = (taskQueue: string): string => `durable-agent-maintenance-${taskQueue}`;

/**
 * Creates the schedule that runs `maintenanceSweep` (archive expiry, memory
 * expiry) unless it exists. Safe to call from every worker at start.
 */
export async function ensureMaintenanceSchedule(options: {
  address: string;
  namespace: string;
  taskQueue: string;
  everyMs: number;
  /** The worker's data converter, so the schedule's arguments are encrypted like every other payload. */
  dataConverter?: DataConverter;
  /** TLS, mTLS and API key, as the worker's own connection uses. */
  transport?: TemporalTransportOptions;
}): Promise<string> {
  const connection = await Connection.connect({ address: options.address, ...options.transport });
  try {
    const client = new Client({ connection, namespace: options.namespace, dataConverter: options.dataConverter });
    const scheduleId = maintenanceScheduleId(options.taskQueue);
    try {
      await client.schedule.create({
        scheduleId,
        spec: { intervals: [{ every: options.everyMs }] },
        action: { type: 'startWorkflow', workflowType: 'maintenanceSweep', taskQueue: options.taskQueue, args: [], workflowId: `${scheduleId}-run` },
        policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 hour' },
      });
    } catch (err) {
      if (!(err instanceof ScheduleAlreadyRunning)) throw err;
      // Made by an earlier start: a changed MAINTENANCE_EVERY_MS took no effect until the schedule was deleted by hand.
      const handle = client.schedule.getHandle(scheduleId);
      const { spec } = await handle.describe();
      // The description gives the interval in ms, rounded to the second.
      const current = spec.intervals?.[0]?.every;
      if (current !== Math.round(options.everyMs / 1000) * 1000 || (spec.intervals?.length ?? 0) !== 1) {
        await handle.update((schedule) => ({ ...schedule, spec: { ...schedule.spec, intervals: [{ every: options.everyMs }] } }));
      }
    }
    return scheduleId;
  } finally {
    await connection.close();
  }
}

