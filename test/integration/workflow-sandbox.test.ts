import { randomUUID } from 'node:crypto';
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { agentSdkWorker, SANDBOX_SDK_VERSION } from '../../workers/sandbox/agent-sdk-worker';
import { bundledWorkflows } from '../support/bundled-workflows';
import { add } from '../support/sandbox-workflows';

/*
 * The agent worker's workflow threads (workers/sandbox/) take the SDK's
 * deadlock check once per activation instead of once per call into the
 * sandbox, and drop the promise hook while stack traces are off. What must
 * hold: workflow code that never yields still fails its workflow task after
 * isolateExecutionTimeout, and the same thread goes on running every other
 * workflow (signals, conditions, timers) to the right result; the stack trace
 * query says traces are off; another SDK version gets the SDK's own threads.
 */

Runtime.install({ logger: new DefaultLogger('ERROR') });

const env = bundledWorkflows(require.resolve('../support/sandbox-workflows'));

async function withWorker<T>(workerClass: typeof Worker, fn: (taskQueue: string) => Promise<T>): Promise<T> {
  const taskQueue = `sandbox-${randomUUID().slice(0, 8)}`;
  const worker = await workerClass.create({
    connection: env.nativeConnection,
    namespace: env.namespace,
    taskQueue,
    workflowBundle: env.bundle,
    // One thread, so the workflows below share the thread the spinning one blocks.
    workflowThreadPoolSize: 1,
    // A short deadlock timeout: read from the options in 1.23.0, though not in their public type.
    ...({ isolateExecutionTimeout: '1 second' } as object),
  });
  return worker.runUntil(fn(taskQueue));
}

/** Starts addUp workflows, signals each its numbers, and returns their results. */
async function addUps(taskQueue: string, sums: number[][]): Promise<number[]> {
  const handles = await Promise.all(
    sums.map((numbers) => env.client.workflow.start('addUp', { taskQueue, workflowId: `add-${randomUUID()}`, args: [numbers.length], workflowExecutionTimeout: '60 seconds' })),
  );
  for (let i = 0; i < Math.max(...sums.map((s) => s.length)); i++) {
    await Promise.all(handles.map((h, j) => (sums[j]![i] === undefined ? undefined : h.signal(add, sums[j]![i]!))));
  }
  return Promise.all(handles.map((h) => h.result() as Promise<number>));
}

describe("the agent worker's workflow threads", () => {
  it('fail a workflow task that never yields after isolateExecutionTimeout, and the same thread runs other workflows to the right result', async () => {
    const warnings: string[] = [];
    await withWorker(agentSdkWorker({ stackTraces: false, warn: (m) => warnings.push(m) }), async (taskQueue) => {
      expect(await addUps(taskQueue, [[1, 2], [3]])).toEqual([3, 3]);
      const spinner = await env.client.workflow.start('spin', { taskQueue, workflowId: `spin-${randomUUID()}`, workflowExecutionTimeout: '60 seconds' });
      try {
        // While the spinner's tasks keep timing out, workflows on the same thread still run.
        const sums = [[5, 6, 7], [1, 1, 1, 1, 1], [100]];
        expect(await addUps(taskQueue, sums)).toEqual([18, 5, 100]);
        const failures = async () =>
          ((await spinner.fetchHistory()).events ?? []).flatMap((e) => (e.workflowTaskFailedEventAttributes ? [e.workflowTaskFailedEventAttributes.failure?.message ?? ''] : []));
        const deadline = Date.now() + 20_000;
        while ((await failures()).length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
        const messages = await failures();
        expect(messages.length).toBeGreaterThan(0);
        expect(messages[0]).toMatch(/Script execution timed out after 1000ms/);
        expect((await spinner.describe()).status.name).toBe('RUNNING');
        // And after a timed-out activation, as many again.
        expect(await addUps(taskQueue, [[2, 2], [9, 1]])).toEqual([4, 10]);
      } finally {
        await spinner.terminate('test over');
      }
      // Stack traces off: the query says so rather than answering with nothing.
      const waiting = await env.client.workflow.start('addUp', { taskQueue, workflowId: `add-${randomUUID()}`, args: [1] });
      await expect(waiting.query('__stack_trace')).rejects.toThrow(/stack traces are not enabled on this worker/);
      await waiting.signal(add, 1);
      expect(await waiting.result()).toBe(1);
    });
    expect(warnings).toEqual([]);
  }, 90_000);

  it('keep the promise hook when stack traces are on', async () => {
    await withWorker(agentSdkWorker({ stackTraces: true }), async (taskQueue) => {
      const waiting = await env.client.workflow.start('addUp', { taskQueue, workflowId: `add-${randomUUID()}`, args: [1] });
      expect(await waiting.query<string>('__stack_trace')).toMatch(/addUp/);
      await waiting.signal(add, 1);
      expect(await waiting.result()).toBe(1);
    });
  });

  it('are the SDK\'s own, with a warning, under another SDK version', async () => {
    const warnings: string[] = [];
    await withWorker(agentSdkWorker({ stackTraces: false, warn: (m) => warnings.push(m), sdkVersion: '0.0.1' }), async (taskQueue) => {
      const waiting = await env.client.workflow.start('addUp', { taskQueue, workflowId: `add-${randomUUID()}`, args: [1] });
      // The SDK's threads keep the promise hook: the query answers.
      expect(typeof (await waiting.query<string>('__stack_trace'))).toBe('string');
      await waiting.signal(add, 1);
      expect(await waiting.result()).toBe(1);
    });
    expect(warnings).toEqual([expect.stringContaining(`@temporalio/worker is 0.0.1, not ${SANDBOX_SDK_VERSION}`)]);
  });
});
