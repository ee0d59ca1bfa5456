import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Worker as NodeWorker } from 'node:worker_threads';
import { Worker, type Logger } from '@temporalio/worker';
import type { CompiledWorkerOptions } from '@temporalio/worker/lib/worker-options';
import type { WorkflowCreator } from '@temporalio/worker/lib/workflow/interface';
import { ThreadedVMWorkflowCreator, WorkerThreadClient } from '@temporalio/worker/lib/workflow/threaded-vm';
import type { WorkflowBundleWithSourceMapAndFilename } from '@temporalio/worker/lib/workflow/workflow-worker-thread/input';

const THREAD_SCRIPT = path.join(__dirname, 'workflow-thread.cjs');

/**
 * The @temporalio/worker version whose internals workflow-thread.cjs was
 * written against (its reusable VM, the thread script and the thread
 * protocol are not public API). With any other version the SDK's own threads
 * run: slower, never wrong.
 */
export const SANDBOX_SDK_VERSION = '1.23.0';

export interface AgentSdkWorkerOptions {
  /** Whether the worker keeps the SDK's stack trace of every workflow promise (WORKFLOW_STACK_TRACES). */
  stackTraces: boolean;
  /** Told once, at start, when the installed SDK is not the version above. */
  warn?: (message: string) => void;
  /** The SDK version to go by; the installed one when absent (tests pass another). */
  sdkVersion?: string;
}

/** The installed @temporalio/worker version. */
export function installedSdkVersion(): string {
  return (JSON.parse(readFileSync(require.resolve('@temporalio/worker/package.json'), 'utf8')) as { version: string }).version;
}

/**
 * The SDK's Worker, with its workflow threads started from
 * workflow-thread.cjs: one deadlock watchdog per activation instead of one per
 * call into the sandbox, and no promise hook when stack traces are off. In
 * debug mode, without V8 context reuse, with another SDK version, or on Bun,
 * the SDK creates its workflows as it always does.
 */
export function agentSdkWorker(options: AgentSdkWorkerOptions): typeof Worker {
  return class AgentSdkWorker extends Worker {
    protected static override async createWorkflowCreator(
      workflowBundle: WorkflowBundleWithSourceMapAndFilename,
      compiledOptions: CompiledWorkerOptions,
      logger: Logger,
    ): Promise<WorkflowCreator> {
      const version = options.sdkVersion ?? installedSdkVersion();
      if (version !== SANDBOX_SDK_VERSION) {
        options.warn?.(
          `@temporalio/worker is ${version}, not ${SANDBOX_SDK_VERSION}: workflows run in the SDK's own threads (a watchdog per call into the sandbox); see docs/performance.md`,
        );
      }
      // On Bun the SDK's activate awaits between its calls into the sandbox: one watch around it would not cover them.
      const onBun = process.versions.bun !== undefined;
      if (compiledOptions.debugMode || compiledOptions.reuseV8Context === false || version !== SANDBOX_SDK_VERSION || onBun) {
        return super.createWorkflowCreator(workflowBundle, compiledOptions, logger);
      }
      const patchActivationCallback = compiledOptions.patchActivationCallback;
      const clients = Array.from(
        { length: compiledOptions.workflowThreadPoolSize },
        () => new WorkerThreadClient(new NodeWorker(THREAD_SCRIPT, { workerData: { stackTraces: options.stackTraces } }), logger, patchActivationCallback),
      );
      await Promise.all(
        clients.map((client) =>
          client.send({
            type: 'init',
            workflowBundle,
            isolateExecutionTimeoutMs: compiledOptions.isolateExecutionTimeoutMs,
            reuseV8Context: true,
            registeredActivityNames: new Set(compiledOptions.activities.keys()),
            hasPatchActivationCallback: patchActivationCallback !== undefined,
          }),
        ),
      );
      return new ThreadedVMWorkflowCreator(clients);
    }
  };
}
