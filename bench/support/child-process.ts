import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

export interface ReadyChild {
  proc: ChildProcess;
  pid: number;
  /** The line that said the child was ready. */
  readyLine: string;
}

/**
 * Runs a TypeScript entry point of bench/support as its own Node process (tsx as a loader, no
 * wrapper process in between, so a signal reaches the script itself) and
 * resolves with the first stdout line matching `ready`. The child's stderr
 * goes to ours with `label` in front; `track` collects the process at once,
 * so a caller can clean up one that never became ready.
 */
export function startChild(
  script: string,
  opts: { args?: string[]; env?: NodeJS.ProcessEnv; ready: RegExp; label: string; track?: ChildProcess[]; timeoutMs?: number },
): Promise<ReadyChild> {
  const proc = spawn(process.execPath, ['--import', 'tsx', join(__dirname, script), ...(opts.args ?? [])], {
    env: opts.env ?? process.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  opts.track?.push(proc);
  proc.stderr?.on('data', (d: Buffer) => {
    for (const line of d.toString().split('\n')) if (line.trim()) process.stderr.write(`[${opts.label}] ${line}\n`);
  });
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`${opts.label} did not start within ${opts.timeoutMs ?? 60_000} ms`)), opts.timeoutMs ?? 60_000);
    const onExit = (code: number | null, signal: string | null) => {
      clearTimeout(timer);
      reject(new Error(`${opts.label} exited before it was ready (${signal ?? code})`));
    };
    proc.once('exit', onExit);
    proc.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      const line = out.split('\n').find((l) => opts.ready.test(l));
      if (line === undefined || proc.pid === undefined) return;
      clearTimeout(timer);
      proc.off('exit', onExit);
      // Keep draining stdout, or a chatty child blocks on a full pipe.
      proc.stdout?.removeAllListeners('data').resume();
      resolve({ proc, pid: proc.pid, readyLine: line });
    });
  });
}

/** SIGKILL, then wait until the process is gone. */
export async function killHard(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  const gone = new Promise((resolve) => proc.once('exit', resolve));
  proc.kill('SIGKILL');
  await gone;
}

/** SIGTERM (the worker drains and exits), SIGKILL after `graceMs`. */
export async function stopChild(proc: ChildProcess, graceMs = 10_000): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  const gone = new Promise((resolve) => proc.once('exit', resolve));
  proc.kill('SIGTERM');
  const timer = setTimeout(() => proc.kill('SIGKILL'), graceMs);
  await gone;
  clearTimeout(timer);
}
