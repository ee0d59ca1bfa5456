import fs from 'node:fs';
import path from 'node:path';
import { StackError } from './errors';

const PROJECT_NAME = 'durable-agent';

/** Every file the stack scripts read or write, resolved once per call. */
export interface StackPaths {
  root: string;
  toolsDir: string;
  toolsBin: string;
  venvDir: string;
  dataDir: string;
  logsDir: string;
  pidsDir: string;
  stateFile: string;
  lockFile: string;
  temporalDbFile: string;
  ferretdbDataDir: string;
  mongodDataDir: string;
  ferretdbSourceDir: string;
  ferretdbBinary: string;
}

/**
 * Finds the repository by walking up from the working directory to the
 * package.json named durable-agent. The module runs both under tsx (CLI) and
 * compiled by swc inside jest, so it avoids __dirname and import.meta and
 * relies on npm and jest both starting in the project.
 */
export function findRepoRoot(start: string = process.cwd()): string {
  let dir = path.resolve(start);
  for (;;) {
    if (readPackageName(path.join(dir, 'package.json')) === PROJECT_NAME) return dir;
    const parent = path.dirname(dir);
    if (parent === dir) {
      throw new StackError(
        `cannot find the ${PROJECT_NAME} repository above ${start}; run this from inside the repository`,
      );
    }
    dir = parent;
  }
}

function readPackageName(file: string): string | undefined {
  try {
    const parsed: unknown = JSON.parse(fs.readFileSync(file, 'utf8'));
    if (typeof parsed === 'object' && parsed !== null && 'name' in parsed) {
      const { name } = parsed;
      return typeof name === 'string' ? name : undefined;
    }
  } catch {
    // No package.json here, or not JSON: keep walking up.
  }
  return undefined;
}

/**
 * Tools are shared by every data dir (they are large and version-pinned);
 * data, logs, pids and state follow DURABLE_AGENT_DATA_DIR so tests can run an
 * isolated stack beside the main one.
 */
export function resolveStackPaths(env: NodeJS.ProcessEnv = process.env): StackPaths {
  const root = findRepoRoot();
  const toolsDir = path.join(root, '.tools');
  const toolsBin = path.join(toolsDir, 'bin');
  const override = env.DURABLE_AGENT_DATA_DIR?.trim();
  const dataDir = override ? path.resolve(root, override) : path.join(root, '.data');
  return {
    root,
    toolsDir,
    toolsBin,
    venvDir: path.join(toolsDir, 'venv'),
    dataDir,
    logsDir: path.join(dataDir, 'logs'),
    pidsDir: path.join(dataDir, 'pids'),
    stateFile: path.join(dataDir, 'stack.json'),
    lockFile: path.join(dataDir, 'stack.lock'),
    temporalDbFile: path.join(dataDir, 'temporal', 'temporal.db'),
    ferretdbDataDir: path.join(dataDir, 'ferretdb'),
    mongodDataDir: path.join(dataDir, 'mongod'),
    ferretdbSourceDir: path.join(root, 'scripts', 'ferretdb'),
    ferretdbBinary: path.join(toolsBin, 'ferretdb-local'),
  };
}

export function ensureDataDirs(paths: StackPaths): void {
  for (const dir of [paths.dataDir, paths.logsDir, paths.pidsDir]) fs.mkdirSync(dir, { recursive: true });
}

export function logFileFor(paths: StackPaths, name: string): string {
  return path.join(paths.logsDir, `${name}.log`);
}

export function pidFileFor(paths: StackPaths, name: string): string {
  return path.join(paths.pidsDir, `${name}.pid`);
}

/** Shortens paths inside the repository for messages; others stay absolute. */
export function displayPath(paths: StackPaths, file: string): string {
  const relative = path.relative(paths.root, file);
  return relative.startsWith('..') || path.isAbsolute(relative) ? file : relative;
}
