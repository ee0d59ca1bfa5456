'use strict';
/*
 * A workflow thread of the agent worker: the SDK's own thread script, with
 * its deadlock check taken per activation instead of per call into the
 * sandbox.
 *
 * The SDK enters the workflow sandbox through `vm` with a timeout for every
 * call (activate, each round of unblocking conditions, conclude), and Node
 * starts and joins a watchdog thread for each timed call. Here the calls into
 * the sandbox run without their own timeout, and the synchronous part of each
 * activation (every call into the sandbox it makes) runs inside one timed
 * `vm` call instead. A timeout stops the isolate's execution wherever it is,
 * so workflow code that never yields still fails its task after the same
 * `isolateExecutionTimeout`, and the thread goes on. See docs/performance.md.
 *
 * Loaded only by workers/sandbox/agent-sdk-worker.ts, which checks the
 * SDK version this was written against (the internals it touches are not
 * public API).
 */
const path = require('node:path');
const vm = require('node:vm');
const { workerData } = require('node:worker_threads');

const sdkWorkflowDir = path.join(path.dirname(require.resolve('@temporalio/worker')), 'workflow');
const { ReusableVMWorkflowCreator } = require(path.join(sdkWorkflowDir, 'reusable-vm.js'));
const { globalHandlers } = require(path.join(sdkWorkflowDir, 'vm-shared.js'));

// An empty context whose only job is to be entered with a timeout: the watchdog covers whatever runs inside.
const guard = vm.createContext({});
const enter = new vm.Script('__watched()', { filename: 'durable-agent:watched-activation' });

/** Runs fn, synchronously, under one watchdog of timeoutMs; its result (a promise from an async fn) is returned. */
function watched(timeoutMs, fn) {
  let result;
  guard.__watched = () => {
    result = fn();
  };
  try {
    enter.runInContext(guard, { timeout: timeoutMs, displayErrors: false });
  } finally {
    guard.__watched = undefined;
  }
  return result;
}

const createWorkflow = ReusableVMWorkflowCreator.prototype.createWorkflow;
ReusableVMWorkflowCreator.prototype.createWorkflow = function createWatchedWorkflow(options) {
  const timeoutMs = this.isolateExecutionTimeoutMs;
  // createWorkflow reads the timeout for its calls into the sandbox before its first await: none for them, one around it.
  this.isolateExecutionTimeoutMs = undefined;
  let created;
  try {
    created = watched(timeoutMs, () => createWorkflow.call(this, options));
  } finally {
    this.isolateExecutionTimeoutMs = timeoutMs;
  }
  return created.then((workflow) => {
    const activate = workflow.activate.bind(workflow);
    workflow.activate = (activation) => {
      try {
        // The SDK's activate makes every call into the sandbox before its first await.
        return watched(timeoutMs, () => activate(activation));
      } catch (err) {
        // As the SDK answers a timed-out call: the activation fails, the task fails and the run is evicted and replayed.
        return Promise.resolve({ runId: workflow.activator.info.runId, failed: { failure: workflow.activator.errorToFailure(err) } });
      }
    };
    const dispose = workflow.dispose.bind(workflow);
    workflow.dispose = () => watched(timeoutMs, () => dispose());
    return workflow;
  });
};

/*
 * With stack traces off (WORKFLOW_STACK_TRACES unset), the SDK's promise hook
 * still runs for every promise workflow code creates: it compiles a function
 * to reach the sandbox's Error, builds an Error and keeps it in a map, only to
 * answer the __stack_trace query with no frames (workflows/stack-trace-limit.ts).
 * Stopped here, the query says stack traces are off on this worker instead.
 */
if (workerData && workerData.stackTraces === false) {
  const create = ReusableVMWorkflowCreator.create;
  ReusableVMWorkflowCreator.create = async function createWithoutPromiseHook(...args) {
    const creator = await create.apply(this, args);
    globalHandlers.stopPromiseHook();
    globalHandlers.promiseHookInstalled = false;
    return creator;
  };
}

require(path.join(sdkWorkflowDir, 'workflow-worker-thread.js'));
