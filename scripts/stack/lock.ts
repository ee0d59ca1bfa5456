import fs from 'node:fs';
import { StackError } from './errors';
import type { StackPaths } from './paths';
import { isRunning } from './processes';
import { sleep } from './wait';

/** Long enough for a first FerretDB build or temporal install by the holder. */
const WAIT_LIMIT_MS = 20 * 60_000;

/**
 * One stack:up / stack:down at a time per data dir, across processes (the CLI
 * and several jest runs may race). The lock file holds the owner's pid, so a
 * lock left by a crashed run is taken over instead of blocking forever.
 */
export async function acquireStackLock(paths: StackPaths, log: (line: string) => void): Promise<() => void> {
  const deadline = Date.now() + WAIT_LIMIT_MS;
  let announced = false;
  for (;;) {
    try {
      const fd = fs.openSync(paths.lockFile, 'wx');
      fs.writeSync(fd, `${process.pid}\n`);
      fs.closeSync(fd);
      return () => release(paths);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const holder = readHolder(paths);
    // An empty file may be a holder between creating and writing it: only
    // an old empty file, or one whose holder died, is taken over.
    if ((holder === null && lockAgeMs(paths) > 5_000) || (holder !== null && holder !== process.pid && !isRunning(holder))) {
      fs.rmSync(paths.lockFile, { force: true });
      continue;
    }
    if (Date.now() > deadline) {
      throw new StackError(`another stack command (pid ${holder ?? 'unknown'}) has held ${paths.lockFile} for too long; stop it or delete the file`);
    }
    if (!announced && holder !== null) {
      log(`waiting for another stack command (pid ${holder}) to finish`);
      announced = true;
    }
    await sleep(250);
  }
}

function readHolder(paths: StackPaths): number | null {
  try {
    const pid = Number(fs.readFileSync(paths.lockFile, 'utf8').trim());
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

function lockAgeMs(paths: StackPaths): number {
  try {
    return Date.now() - fs.statSync(paths.lockFile).mtimeMs;
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}

function release(paths: StackPaths): void {
  if (readHolder(paths) === process.pid) fs.rmSync(paths.lockFile, { force: true });
}
