import fs from 'node:fs';
import path from 'node:path';
import { ToolInstallError } from './errors';
import { displayPath, type StackPaths } from './paths';
import { findOnPath } from './processes';
import { runCommand } from './run-command';
import type { Log } from './types';

const SOURCES = ['main.go', 'id_index.go', 'go.mod', 'go.sum'];

/**
 * Builds .tools/bin/ferretdb-local from scripts/ferretdb when it is missing or
 * older than its sources. A first build with an empty module cache downloads
 * FerretDB and ~70 modules and compiles a pure-Go SQLite, which takes minutes
 * on a small machine, so progress is reported while it runs.
 */
export async function ensureFerretdbBinary(paths: StackPaths, env: NodeJS.ProcessEnv, log: Log): Promise<string> {
  const binary = paths.ferretdbBinary;
  const reason = rebuildReason(paths);
  if (!reason) return binary;
  const go = findOnPath('go', env);
  if (!go) {
    if (fs.existsSync(binary)) {
      log(`warning: ${reason} but go is not on PATH; using the existing ${displayPath(paths, binary)}`);
      return binary;
    }
    throw new ToolInstallError(
      'no MongoDB-compatible server available: mongod is not on PATH, and FerretDB cannot be built because go is not on PATH; ' +
        'install Go 1.24 or newer (or MongoDB), or set MONGODB_URI to a running server',
    );
  }
  log(
    `building ${displayPath(paths, binary)} from scripts/ferretdb (${reason}); ` +
      'a first build downloads FerretDB v1.24.2 and its modules and can take several minutes',
  );
  fs.mkdirSync(paths.toolsBin, { recursive: true });
  const started = Date.now();
  const seconds = (): number => Math.round((Date.now() - started) / 1000);
  let compiled = 0;
  let lastPackage = '';
  const heartbeat = setInterval(() => {
    log(`still building (${seconds()}s, ${compiled} packages compiled${lastPackage ? `, now past ${lastPackage}` : ''})`);
  }, 15_000);
  try {
    const result = await runCommand([go, 'build', '-v', '-o', binary, '.'], {
      cwd: paths.ferretdbSourceDir,
      env: {
        ...env,
        // The repository may have no commits yet, which makes VCS stamping fail.
        GOFLAGS: [env.GOFLAGS, '-buildvcs=false'].filter(Boolean).join(' '),
      },
      onLine: (line) => {
        if (line.startsWith('go: downloading')) log(line);
        else if (/^[\w.\-/]+$/.test(line)) {
          compiled += 1;
          lastPackage = line;
        }
      },
    });
    if (result.code !== 0) {
      throw new ToolInstallError(`go build in scripts/ferretdb failed (exit ${String(result.code)}):\n${result.tail.join('\n')}`);
    }
  } finally {
    clearInterval(heartbeat);
  }
  // go build leaves an up-to-date binary untouched, which would keep it
  // "older than its sources" and trigger this build on every start.
  const now = new Date();
  fs.utimesSync(binary, now, now);
  log(`built ${displayPath(paths, binary)} in ${seconds()}s`);
  return binary;
}

function rebuildReason(paths: StackPaths): string | null {
  let built: number;
  try {
    built = fs.statSync(paths.ferretdbBinary).mtimeMs;
  } catch {
    return 'not built yet';
  }
  for (const name of SOURCES) {
    const source = path.join(paths.ferretdbSourceDir, name);
    try {
      if (fs.statSync(source).mtimeMs > built) return `scripts/ferretdb/${name} changed since the last build`;
    } catch {
      throw new ToolInstallError(`${source} is missing; scripts/ferretdb must contain ${SOURCES.join(', ')}`);
    }
  }
  return null;
}
