import fs from 'node:fs';
import { acquireStackLock } from './lock';
import { resolveStackPaths, type StackPaths } from './paths';
import { commandMatches, isRunning, readCommandLine, terminate } from './processes';
import { clearComponent, readState, type CodecRecord, type ComponentName, type MongoRecord, type TemporalRecord } from './state-file';
import type { Log } from './types';

export interface StopStackOptions {
  log?: Log;
  /** Settings (DURABLE_AGENT_DATA_DIR...); defaults to process.env. */
  env?: NodeJS.ProcessEnv;
}

/**
 * Stops only what our state file says we started, after checking that each
 * pid still runs the exact command we launched. Servers named by
 * TEMPORAL_ADDRESS / MONGODB_URI are never touched. Returns what it stopped.
 */
export async function stopStack(options: StopStackOptions = {}): Promise<string[]> {
  const log = options.log ?? defaultLog;
  const env = options.env ?? process.env;
  const paths = resolveStackPaths(env);
  const stopped: string[] = [];
  if (fs.existsSync(paths.stateFile)) {
    const release = await acquireStackLock(paths, log);
    try {
      const state = readState(paths);
      const results = await Promise.all([
        stopRecorded(paths, 'temporal', state.temporal, log),
        stopRecorded(paths, 'mongo', state.mongo, log),
        stopRecorded(paths, 'codec', state.codec, log),
      ]);
      for (const result of results) if (result) stopped.push(result);
    } finally {
      release();
    }
  }
  if (stopped.length === 0) log(`nothing to stop: no server started by durable-agent is running (data dir ${paths.dataDir})`);
  if (env.TEMPORAL_ADDRESS?.trim()) log(`temporal: TEMPORAL_ADDRESS=${env.TEMPORAL_ADDRESS.trim()} is not managed by durable-agent; left alone`);
  if (env.MONGODB_URI?.trim()) log('mongo: MONGODB_URI is not managed by durable-agent; left alone');
  return stopped;
}

async function stopRecorded(
  paths: StackPaths,
  name: ComponentName,
  record: TemporalRecord | MongoRecord | CodecRecord | undefined,
  log: Log,
): Promise<string | null> {
  if (!record) return null;
  const label = `${name}: ${record.kind === 'temporal' ? 'temporal dev server' : record.kind === 'codec' ? 'codec server' : record.kind} (pid ${record.pid})`;
  if (!isRunning(record.pid)) {
    log(`${label} was not running`);
    clearComponent(paths, name);
    return null;
  }
  const actual = readCommandLine(record.pid);
  if (!commandMatches(actual, record.argv)) {
    log(`${label}: that pid now runs another program (${actual?.join(' ') ?? 'unknown'}); not signalling it`);
    clearComponent(paths, name);
    return null;
  }
  log(`${label}: stopping`);
  const outcome = await terminate(record.pid);
  log(`${label}: ${outcome === 'killed' ? 'killed after it ignored SIGTERM' : 'stopped'}`);
  clearComponent(paths, name);
  return record.kind;
}

function defaultLog(line: string): void {
  process.stdout.write(`${line}\n`);
}
