/**
 * `npm run build:workflows [-- <path>]`: bundles the workflow code once, so a
 * worker started with WORKFLOW_BUNDLE_PATH=<path> loads it instead of running
 * webpack over workflows/ at every start (measured by `npm run bench:cold-start`).
 * Default path: dist/workflow-bundle.js. Rebuild it with every change to the
 * workflow code; a worker with OpenTelemetry tracing on bundles at start anyway.
 * WORKFLOW_STACK_TRACES=true builds it with the SDK's stack traces kept (workers/workflow-bundle.ts).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { WORKFLOWS_PATH, stackTracesFromEnv, workflowBundlerOptions } from '../workers/workflow-bundle';

const noop = () => undefined;
const quietLogger = { trace: noop, debug: noop, info: noop, warn: noop, error: (m: string) => process.stderr.write(`${m}\n`), log: noop };

/** Writes the bundle of workflows/ to `path` and returns the absolute path. */
export async function buildWorkflowBundle(path: string): Promise<string> {
  const out = resolve(path);
  const bundle = await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, ...workflowBundlerOptions(stackTracesFromEnv()), logger: quietLogger });
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, bundle.code);
  return out;
}

if (require.main === module) {
  buildWorkflowBundle(process.argv[2] ?? 'dist/workflow-bundle.js')
    .then((out) => console.log(`workflow bundle written; start workers with WORKFLOW_BUNDLE_PATH=${out}`))
    .catch((err: unknown) => {
      console.error(err);
      process.exit(1);
    });
}
