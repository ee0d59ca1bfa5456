import { spawn } from 'node:child_process';

export interface CommandResult {
  code: number | null;
  /** The last lines of combined output, for error messages. */
  tail: string[];
}

export interface RunCommandOptions {
  cwd: string;
  env?: NodeJS.ProcessEnv;
  /** Called with every output line as it arrives (stdout and stderr). */
  onLine?: (line: string) => void;
  tailLines?: number;
}

/** Runs an install or build step to completion, streaming its output by line. */
export function runCommand(argv: readonly string[], options: RunCommandOptions): Promise<CommandResult> {
  const [command, ...args] = argv;
  if (command === undefined) return Promise.resolve({ code: null, tail: ['empty command line'] });
  const keep = options.tailLines ?? 30;
  const tail: string[] = [];
  return new Promise((resolve) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const pending = { stdout: '', stderr: '' };
    const take = (stream: 'stdout' | 'stderr', chunk: Buffer): void => {
      const lines = (pending[stream] + chunk.toString('utf8')).split('\n');
      pending[stream] = lines.pop() ?? '';
      for (const line of lines) accept(line);
    };
    const accept = (line: string): void => {
      if (!line.trim()) return;
      tail.push(line);
      if (tail.length > keep) tail.shift();
      options.onLine?.(line);
    };
    child.stdout.on('data', (chunk: Buffer) => take('stdout', chunk));
    child.stderr.on('data', (chunk: Buffer) => take('stderr', chunk));
    child.once('error', (error) => resolve({ code: null, tail: [...tail, error.message] }));
    child.once('close', (code) => {
      accept(pending.stdout);
      accept(pending.stderr);
      resolve({ code, tail });
    });
  });
}

/** Runs a quick command and returns its stdout, or null if it failed. */
export async function captureOutput(argv: readonly string[], cwd: string, env: NodeJS.ProcessEnv): Promise<string | null> {
  const lines: string[] = [];
  const result = await runCommand(argv, { cwd, env, onLine: (line) => lines.push(line), tailLines: 1 });
  return result.code === 0 ? lines.join('\n') : null;
}
