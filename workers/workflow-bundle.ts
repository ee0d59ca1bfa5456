/** How the session workflows are bundled, the same for a worker that bundles at start and for a prebuilt bundle. */
export const WORKFLOWS_PATH = require.resolve('../workflows');

/** Preloaded into the sandbox when stack traces are off: sets no frames to capture (workflows/stack-trace-limit.ts). */
const STACK_TRACE_LIMIT_MODULE = require.resolve('../workflows/stack-trace-limit');

/** Preloaded into the sandbox always: zod, evaluated once per worker instead of once per run (workflows/shared-libraries.ts). */
const SHARED_LIBRARIES_MODULE = require.resolve('../workflows/shared-libraries');

/** Preloaded into the sandbox always: what `builtOnce` keeps is shared by every run (workflows/built-once.ts). */
const BUILT_ONCE_MODULE = require.resolve('../workflows/built-once');

/** The bundler options for `Worker.create({ bundlerOptions })` and `bundleWorkflowCode`. */
export function workflowBundlerOptions(stackTraces: boolean): { preloadModules: string[] } {
  return { preloadModules: [...(stackTraces ? [] : [STACK_TRACE_LIMIT_MODULE]), SHARED_LIBRARIES_MODULE, BUILT_ONCE_MODULE] };
}

/**
 * `WORKFLOW_STACK_TRACES` for scripts that bundle outside a worker's config, read as the config reads a
 * flag (true/1/yes/on, false/0/no/off, unset: off); anything else is refused rather than taken as off.
 */
export function stackTracesFromEnv(env: NodeJS.ProcessEnv = process.env): boolean {
  const flag = (env.WORKFLOW_STACK_TRACES ?? '').trim().toLowerCase();
  if (['true', '1', 'yes', 'on'].includes(flag)) return true;
  if (['', 'false', '0', 'no', 'off'].includes(flag)) return false;
  throw new Error(`WORKFLOW_STACK_TRACES is ${JSON.stringify(env.WORKFLOW_STACK_TRACES)}: set it to true or false`);
}
