import type { Client } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { floorNoopActivity } from './floor-activity';
import type { FloorActivities } from './floor-workflow';

/** A bare Temporal worker and workflow on their own task queue, timed turn by turn like the session. */
export class TemporalFloor {
  private turns = 0;

  private constructor(
    private readonly client: Client,
    private readonly taskQueue: string,
    private readonly worker: Worker,
    private readonly running: Promise<void>,
    private readonly connection: NativeConnection,
  ) {}

  static async start(client: Client, address: string, namespace: string, taskQueue: string): Promise<TemporalFloor> {
    const connection = await NativeConnection.connect({ address });
    const activities: FloorActivities = { floorNoop: floorNoopActivity };
    // The client's data converter (payload encryption when configured), so the floor pays the same codec cost as a session.
    const worker = await Worker.create({
      connection,
      namespace,
      taskQueue,
      workflowsPath: require.resolve('./floor-workflow'),
      activities,
      dataConverter: client.options.dataConverter,
    });
    return new TemporalFloor(client, taskQueue, worker, worker.run(), connection);
  }

  /** One turn of `steps` steps, start to result, in ms. */
  async turn(steps: number): Promise<number> {
    const started = performance.now();
    await this.client.workflow.execute('floorTurn', { taskQueue: this.taskQueue, workflowId: `${this.taskQueue}-${++this.turns}`, args: [steps] });
    return performance.now() - started;
  }

  async stop(): Promise<void> {
    if (this.worker.getState() === 'RUNNING') this.worker.shutdown();
    await this.running.catch(() => undefined);
    await this.connection.close().catch(() => undefined);
  }
}
