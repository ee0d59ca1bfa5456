import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { WORKFLOWS_PATH, stackTracesFromEnv, workflowBundlerOptions } from '../../workers/workflow-bundle';
import { ensureLocalModels } from '../../scripts/fetch-embedding-model';
import { ensureStack } from '../../scripts/stack';

/**
 * Brings the local stack up (reusing a running one), fetches the local
 * embedding models (kept under .tools/models/; tests use the real ones), and
 * bundles the workflow code once, so each test file's worker starts in milliseconds.
 */
export default async function globalSetup(): Promise<void> {
  await ensureLocalModels(undefined, { log: (line: string) => process.stderr.write(`[models] ${line}\n`) });
  const info = await ensureStack({ log: (line: string) => process.stderr.write(`[stack] ${line}\n`) });
  process.env.TEMPORAL_ADDRESS = info.temporalAddress;
  process.env.TEMPORAL_NAMESPACE = info.temporalNamespace;
  process.env.MONGODB_URI = info.mongoUri;
  if (info.uiUrl) process.env.TEMPORAL_UI_URL = info.uiUrl;

  const dir = resolve(process.env.DURABLE_AGENT_DATA_DIR ?? join(process.cwd(), '.data'), 'test');
  mkdirSync(dir, { recursive: true });
  const bundle = await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, ...workflowBundlerOptions(stackTracesFromEnv()), logger: quietLogger });
  const codePath = join(dir, 'workflow-bundle.js');
  writeFileSync(codePath, bundle.code);
  process.env.WORKFLOW_BUNDLE_PATH = codePath;
}

const noop = () => undefined;
const quietLogger = { trace: noop, debug: noop, info: noop, warn: noop, error: (m: string) => process.stderr.write(`${m}\n`), log: noop };
