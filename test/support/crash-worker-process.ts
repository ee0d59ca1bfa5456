import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import type { TestEnv } from './test-env';

/**
 * Starts `crash-worker.ts` as a child process on the test env's task queue,
 * database and scripted model, and resolves once it polls. Node itself with
 * tsx as a loader: the tsx CLI would put a wrapper process between us and the
 * worker, and SIGKILL must reach the worker. `track` collects the process
 * at once, so a test can clean up one that never became ready. Its sessions
 * move to another worker 2 s after it dies (the sticky queue timeout; 10 s by
 * default, which only makes the crash tests slower).
 */
export function startCrashWorker(env: TestEnv, extraEnv: Record<string, string> = {}, track?: ChildProcess[]): Promise<ChildProcess> {
  const proc = spawn(process.execPath, ['--import', 'tsx', join(process.cwd(), 'test/support/crash-worker.ts')], {
    env: {
      ...process.env,
      TEMPORAL_TASK_QUEUE: env.taskQueue,
      MONGODB_DATABASE: env.config.mongodb.database,
      OPENAI_BASE_URL: env.config.model.baseUrl,
      OPENAI_API_KEY: 'test-key',
      MODEL_NAME: 'scripted',
      MAINTENANCE_EVERY_MS: '0',
      WORKER_STICKY_QUEUE_TIMEOUT_MS: '2000',
      ...extraEnv,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  track?.push(proc);
  let stderr = '';
  proc.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve, reject) => {
    proc.stdout?.on('data', (d: Buffer) => {
      if (d.toString().includes('worker ready')) resolve(proc);
    });
    proc.on('exit', (code) => reject(new Error(`worker exited early (${code}): ${stderr}`)));
  });
}
