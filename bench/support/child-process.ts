import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

export interface ReadyChild {
  proc: ChildProcess;
  pid: number;
  /** The line that said the child was ready. */
  readyLine: string;
  /** Writes `request` to the child's stdin and resolves with its next stdout line matching `answer`. */
  ask(request: string, answer: RegExp, timeoutMs?: number): Promise<string>;
}

/**
 * Runs a TypeScript entry point of bench/support as its own Node process
 * (tsx as a loader, no wrapper process in between, so a signal reaches the
 * script itself) and resolves with the first stdout line matching `ready`.
 * The child's stderr goes to ours with `label` in front; `track` collects
 * the process at once, so a caller can clean up one that never became ready.
 */
export function startChild(
  script: string,
  opts: { args?: string[]; nodeArgs?: string[]; env?: NodeJS.ProcessEnv; ready: RegExp; label: string; track?: ChildProcess[]; timeoutMs?: number },
): Promise<ReadyChild> {
  const proc = spawn(process.execPath, [...(opts.nodeArgs ?? []), '--import', 'tsx', join(__dirname, script), ...(opts.args ?? [])], {
    env: opts.env ?? process.env,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  opts.track?.push(proc);
  proc.stdin?.on('error', () => undefined);
  proc.stderr?.on('data', (d: Buffer) => {
    for (const line of d.toString().split('\n')) if (line.trim()) process.stderr.write(`[${opts.label}] ${line}\n`);
  });
  // Every stdout line goes to whoever waits for one like it; the rest are dropped (the pipe must keep draining).
  const waiting = new Set<{ pattern: RegExp; resolve: (line: string) => void }>();
  createInterface({ input: proc.stdout! }).on('line', (line) => {
    for (const w of waiting) {
      if (!w.pattern.test(line)) continue;
      waiting.delete(w);
      w.resolve(line);
    }
  });
  const nextLine = (pattern: RegExp, timeoutMs: number, what: string): Promise<string> =>
    new Promise((resolve, reject) => {
      const fail = (why: string) => {
        waiting.delete(entry);
        reject(new Error(`${opts.label} ${why} before ${what}`));
      };
      const timer = setTimeout(() => fail(`took over ${timeoutMs} ms`), timeoutMs);
      const onExit = (code: number | null, signal: string | null) => fail(`exited (${signal ?? code})`);
      const entry = {
        pattern,
        resolve: (line: string) => {
          clearTimeout(timer);
          proc.off('exit', onExit);
          resolve(line);
        },
      };
      waiting.add(entry);
      proc.once('exit', onExit);
    });
  return nextLine(opts.ready, opts.timeoutMs ?? 60_000, 'it was ready').then((readyLine) => ({
    proc,
    pid: proc.pid as number,
    readyLine,
    ask: (request, answer, timeoutMs = 30_000) => {
      const line = nextLine(answer, timeoutMs, `it answered ${request}`);
      proc.stdin?.write(`${request}\n`);
      return line;
    },
  }));
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
