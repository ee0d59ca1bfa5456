import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode, DefaultLogger, NativeConnection, type BundleOptions, type WorkflowBundleWithSourceMap } from '@temporalio/worker';

/**
 * For tests that run workflows of their own on a worker they create: bundles
 * `workflowsPath` and connects to the dev server before the tests of the
 * file, and closes the connections after them. Read the fields in tests.
 */
export function bundledWorkflows(workflowsPath: string, bundlerOptions: Partial<BundleOptions> = {}) {
  const state = {} as { bundle: WorkflowBundleWithSourceMap; nativeConnection: NativeConnection; connection: Connection; client: Client; namespace: string };
  beforeAll(async () => {
    const address = process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233';
    state.namespace = process.env.TEMPORAL_NAMESPACE ?? 'default';
    state.bundle = await bundleWorkflowCode({ workflowsPath, ...bundlerOptions, logger: new DefaultLogger('ERROR') });
    state.nativeConnection = await NativeConnection.connect({ address });
    state.connection = await Connection.connect({ address });
    state.client = new Client({ connection: state.connection, namespace: state.namespace });
  }, 60_000);
  afterAll(async () => {
    await state.connection?.close();
    await state.nativeConnection?.close();
  });
  return state;
}
