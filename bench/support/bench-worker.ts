/**
 * A session worker in a process of its own with the bench's no-op tool, for
 * benchmarks that measure a worker's own memory or SIGKILL it. Configured
 * from the environment like `npm run worker` (WORKER_* tuning included);
 * prints `worker ready` once it polls, and answers `heap` on stdin with its
 * heap in use after a full collection (when started with --expose-gc; the
 * workflows' heap too with BENCH_WORKFLOWS_IN_MAIN_THREAD=1).
 */
import { createInterface } from 'node:readline';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { createAgentWorker } from '../../workers/agent-worker';
import { loadConfig } from '../../workers/config';
import { noopTool } from './noop-tool';

async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const handle = await createAgentWorker(loadConfig(), {
    workflowBundlePath: process.env.WORKFLOW_BUNDLE_PATH,
    extraTools: [noopTool],
    // The SDK runs workflows in a worker thread, whose heap `heap` cannot see; its debug mode runs them in this one.
    ...(process.env.BENCH_WORKFLOWS_IN_MAIN_THREAD === '1' ? { workerOptions: { debugMode: true } } : {}),
  });
  process.stdout.write('worker ready\n');
  // `heap` on stdin: collect garbage (node --expose-gc) and say what the heap still holds, in MB.
  createInterface({ input: process.stdin }).on('line', (line) => {
    if (line.trim() !== 'heap') return;
    (globalThis as { gc?: () => void }).gc?.();
    process.stdout.write(`heap ${(process.memoryUsage().heapUsed / 1048576).toFixed(1)}\n`);
  });
  await handle.run();
  process.exit(0);
}

main().catch((err: unknown) => {
  process.stderr.write(`bench worker: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
