import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { dataConverterFor } from '../../codec/data-converter';
import { loadConfig } from '../../workers/config';
import { floorNoopActivity } from './floor-activity';
import type { FloorActivities } from './floor-workflow';

/**
 * The bare Temporal floor's worker in a process of its own (bench:concurrency
 * runs it beside the session workers' processes, as they run):
 * `floor-worker.ts <address> <namespace> <task queue>`, with the session
 * workers' environment, so it pays the same payload codec. Prints `worker ready`.
 */
async function main(): Promise<void> {
  const [address, namespace, taskQueue] = process.argv.slice(2);
  if (!address || !namespace || !taskQueue) throw new Error('usage: floor-worker.ts <address> <namespace> <task queue>');
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const connection = await NativeConnection.connect({ address });
  const activities: FloorActivities = { floorNoop: floorNoopActivity };
  const dataConverter = dataConverterFor(loadConfig().encryption);
  const worker = await Worker.create({ connection, namespace, taskQueue, workflowsPath: require.resolve('./floor-workflow'), activities, dataConverter });
  process.stdout.write('worker ready\n');
  await worker.run();
  await connection.close();
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
