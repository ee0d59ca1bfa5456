import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { StartupFailedError } from './errors';
import { sleep } from './wait';

const HAS_PROCFS = fs.existsSync('/proc/self/cmdline');

/**
 * The command line of a live process, or null when it is gone or unreadable.
 * Exact argv from /proc on Linux; elsewhere (macOS) `ps` gives one string,
 * returned as a single element.
 */
export function readCommandLine(pid: number): string[] | null {
  if (!HAS_PROCFS) return readCommandLineWithPs(pid);
  try {
    const raw = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    const argv = raw.split('\0');
    if (argv[argv.length - 1] === '') argv.pop();
    return argv.length > 0 ? argv : null;
  } catch {
    return null;
  }
}

function readCommandLineWithPs(pid: number): string[] | null {
  try {
    const line = execFileSync('ps', ['-o', 'args=', '-p', String(pid)], { encoding: 'utf8' }).trim();
    return line ? [line] : null;
  } catch {
    return null;
  }
}

/**
 * Alive means signalable and not a zombie: a server we spawned from this very
 * process (jest's global setup) stays in the process table as a zombie after
 * it dies until Node reaps it, and must not count as running.
 */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  // Without procfs (macOS) the signal test above is all we have.
  if (!HAS_PROCFS) return true;
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    // Exited between the signal test and the read.
    return false;
  }
}

/**
 * Whether the live process at a recorded pid is still the program we started,
 * so that a pid reused by the OS for something else is never signalled.
 * argv[0] may be shown resolved or as given, hence the basename fallback.
 */
export function commandMatches(actual: readonly string[] | null, expected: readonly string[]): boolean {
  if (!actual) return false;
  if (!HAS_PROCFS && actual.length === 1) return actual[0] === expected.join(' ');
  if (actual.length !== expected.length) return false;
  const [actualBin, ...actualArgs] = actual;
  const [expectedBin, ...expectedArgs] = expected;
  if (actualBin === undefined || expectedBin === undefined) return false;
  if (actualBin !== expectedBin && path.basename(actualBin) !== path.basename(expectedBin)) return false;
  return actualArgs.every((arg, index) => arg === expectedArgs[index]);
}

export function isOurProcess(pid: number, argv: readonly string[]): boolean {
  return isRunning(pid) && commandMatches(readCommandLine(pid), argv);
}

export interface DetachedSpawnOptions {
  argv: readonly string[];
  logFile: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
}

/**
 * Starts a server that outlives this script: its own session (detached), its
 * output appended to a log file, and no handle keeping Node alive (unref).
 * Resolves once the OS has started it; rejects if the binary cannot run.
 */
export function spawnDetached(options: DetachedSpawnOptions): Promise<number> {
  const [command, ...args] = options.argv;
  if (command === undefined) return Promise.reject(new StartupFailedError('empty command line'));
  const fd = fs.openSync(options.logFile, 'a');
  return new Promise<number>((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env,
      detached: true,
      stdio: ['ignore', fd, fd],
    });
    child.once('error', (error) => {
      reject(new StartupFailedError(`cannot run ${command}: ${error.message}`));
    });
    child.once('spawn', () => {
      child.unref();
      if (child.pid === undefined) reject(new StartupFailedError(`${command} started without a pid`));
      else resolve(child.pid);
    });
  }).finally(() => fs.closeSync(fd));
}

export type StopOutcome = 'terminated' | 'killed' | 'already-gone';

/** SIGTERM, wait up to graceMs for a clean shutdown, then SIGKILL. */
export async function terminate(pid: number, graceMs = 15_000): Promise<StopOutcome> {
  if (!isRunning(pid)) return 'already-gone';
  if (!signal(pid, 'SIGTERM')) return 'already-gone';
  if (await waitForExit(pid, graceMs)) return 'terminated';
  signal(pid, 'SIGKILL');
  await waitForExit(pid, 5_000);
  return 'killed';
}

function signal(pid: number, name: NodeJS.Signals): boolean {
  try {
    process.kill(pid, name);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false;
    throw error;
  }
}

async function waitForExit(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!isRunning(pid)) return true;
    await sleep(100);
  }
  return !isRunning(pid);
}

/** Finds an executable on PATH, like `command -v`. */
export function findOnPath(name: string, env: NodeJS.ProcessEnv = process.env): string | null {
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    if (isExecutableFile(candidate)) return candidate;
  }
  return null;
}

export function isExecutableFile(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}
