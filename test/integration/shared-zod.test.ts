import { randomUUID } from 'node:crypto';
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { workflowBundlerOptions } from '../../workers/workflow-bundle';
import { bundledWorkflows } from '../support/bundled-workflows';
import { runChecks } from '../support/shared-zod-checks';

/*
 * The agent worker preloads zod into the workflow sandbox once
 * (workflows/shared-libraries.ts): every run shares it, and the SDK freezes
 * it. What must hold: runs see the shared zod; the session's kinds of checks
 * give inside the sandbox, run after run, what they give outside it, failing
 * values and their messages included; and the one kind of check that a
 * frozen zod refuses (a string format tested by an expression in zod's own
 * module) still throws, which is why the lint rule keeps it
 * out of workflows/.
 */

Runtime.install({ logger: new DefaultLogger('ERROR') });

const env = bundledWorkflows(require.resolve('../support/shared-zod-workflows'), workflowBundlerOptions(false));

async function withWorker<T>(fn: (taskQueue: string) => Promise<T>): Promise<T> {
  const taskQueue = `shared-zod-${randomUUID().slice(0, 8)}`;
  const worker = await Worker.create({ connection: env.nativeConnection, namespace: env.namespace, taskQueue, workflowBundle: env.bundle, workflowThreadPoolSize: 1 });
  return worker.runUntil(fn(taskQueue));
}

describe('zod preloaded into the workflow sandbox', () => {
  it('is shared by every run, and answers run after run as it does outside the sandbox', async () => {
    const expected = runChecks();
    // The session's schemas accept some of the values and refuse others, so the comparison below covers both.
    expect(expected.filter((a) => a.ok).length).toBeGreaterThan(0);
    expect(expected.filter((a) => !a.ok).length).toBeGreaterThan(0);
    await withWorker(async (taskQueue) => {
      for (let run = 0; run < 3; run++) {
        const result = await env.client.workflow.execute('zodChecks', { taskQueue, workflowId: `zod-${randomUUID()}`, workflowExecutionTimeout: '60 seconds' });
        expect(result.shared).toBe(true);
        expect(result.answers).toEqual(JSON.parse(JSON.stringify(expected)));
      }
    });
  }, 60_000);

  it('builds the session\'s schemas once: every run after the first uses the objects the first one built', async () => {
    await withWorker(async (taskQueue) => {
      const runs: string[] = [];
      for (let run = 0; run < 3; run++) {
        const handle = await env.client.workflow.start('schemaSharing', { taskQueue, workflowId: `schemas-${randomUUID()}`, workflowExecutionTimeout: '60 seconds' });
        runs.push(handle.firstExecutionRunId);
        const result = await handle.result();
        expect(result).toEqual({ builtBy: runs[0], sameSchemas: true });
      }
    });
  }, 60_000);

  it('refuses a string format tested by an expression in zod\'s module, as the lint rule warns', async () => {
    await withWorker(async (taskQueue) => {
      const result = await env.client.workflow.execute('zodEmailCheck', { taskQueue, workflowId: `zod-email-${randomUUID()}`, args: ['a@b.co'], workflowExecutionTimeout: '60 seconds' });
      expect(result).toEqual({ threw: expect.stringMatching(/^TypeError: .*read only property 'lastIndex'/) });
    });
  }, 60_000);
});
