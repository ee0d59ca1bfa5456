/** How the session workflows are bundled, the same for a worker that bundles at start and for a prebuilt bundle. */
export const WORKFLOWS_PATH = require.resolve('../workflows');

/** Preloaded into the sandbox when stack traces are off: sets no frames to capture (workflows/stack-trace-limit.ts). */
const STACK_TRACE_LIMIT_MODULE = require.resolve('../workflows/stack-trace-limit');

/** The bundler options for `Worker.create({ bundlerOptions })` and `bundleWorkflowCode`. */
export function workflowBundlerOptions(stackTraces: boolean): { preloadModules: string[] } {
  return { preloadModules: stackTraces ? [] : [STACK_TRACE_LIMIT_MODULE] };
}

/** `WORKFLOW_STACK_TRACES` for scripts that bundle outside a worker's config (true, 1, yes: on). */
export const stackTracesFromEnv = (env: NodeJS.ProcessEnv = process.env): boolean => /^(true|1|yes|on)$/i.test(env.WORKFLOW_STACK_TRACES ?? '');
