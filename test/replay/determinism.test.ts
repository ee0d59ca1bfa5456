import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import type { History } from '@temporalio/common/lib/proto-utils';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import * as activities from './fixtures/fixture-activities';

/*
 * Proves the replay suite can fail: a history recorded by one version of a
 * workflow is replayed against a version that issues its commands in another
 * order. If this test ever passes the careless version, the corpus replay
 * proves nothing either.
 */

Runtime.install({ logger: new DefaultLogger('ERROR') });

const fixture = (file: string) => ({ workflowsPath: require.resolve(`./fixtures/${file}`) });
const WORKFLOW = 'fixtureWorkflow';

/** Runs the workflow once with the v1 code on the real dev server and returns its history. */
async function recordV1(): Promise<History> {
  const address = process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233';
  const namespace = process.env.TEMPORAL_NAMESPACE ?? 'default';
  const taskQueue = `replay-fixture-${randomUUID().slice(0, 8)}`;
  const nativeConnection = await NativeConnection.connect({ address });
  const connection = await Connection.connect({ address });
  try {
    const worker = await Worker.create({ connection: nativeConnection, namespace, taskQueue, ...fixture('fixture-v1'), activities });
    const client = new Client({ connection, namespace });
    return await worker.runUntil(async () => {
      const handle = await client.workflow.start(WORKFLOW, { taskQueue, workflowId: `fixture-${randomUUID()}`, args: ['Ana'] });
      expect(await handle.result()).toBe('hello, Ana');
      return handle.fetchHistory();
    });
  } finally {
    await connection.close();
    await nativeConnection.close();
  }
}

let history: History;
beforeAll(async () => {
  history = await recordV1();
});

describe('replay catches a nondeterministic change', () => {
  it('replays the v1 history against the v1 code', async () => {
    await expect(Worker.runReplayHistory(fixture('fixture-v1'), history)).resolves.toBeUndefined();
  });

  it('fails the v1 history against v2, which schedules the timer before the activity', async () => {
    const error = await Worker.runReplayHistory(fixture('fixture-v2'), history).then(
      () => null,
      (err: unknown) => err,
    );
    expect(error).toBeInstanceOf(DeterminismViolationError);
    expect((error as Error).message).toMatch(/nondetermin/i);
  });

  it('replays the v1 history against v2 guarded by patched(), which keeps the old order for old runs', async () => {
    await expect(Worker.runReplayHistory(fixture('fixture-v2-patched'), history)).resolves.toBeUndefined();
  });
});
