import fs from 'node:fs';
import { errorMessage, ExternalServerUnreachableError, StackConfigError } from './errors';
import { ensureFerretdbBinary } from './ferretdb-build';
import { markLogStart, withLogTail } from './log-file';
import { redactUri, pingMongo, waitForMongo } from './mongo-health';
import { logFileFor, type StackPaths } from './paths';
import { assertPortFree, LOOPBACK, portFromEnv } from './ports';
import { findOnPath, isOurProcess, isRunning, spawnDetached, terminate } from './processes';
import { clearComponent, pidFileMismatch, readState, saveComponent, type MongoRecord } from './state-file';
import type { ComponentView, Log, StackContext } from './types';

export const DEFAULT_MONGO_PORT = 27017;
const START_TIMEOUT_MS = 60_000;
const REUSE_TIMEOUT_MS = 20_000;

export function mongoPort(env: NodeJS.ProcessEnv): number {
  return portFromEnv(env, 'MONGO_PORT', DEFAULT_MONGO_PORT);
}

/**
 * Makes a MongoDB-compatible server available: MONGODB_URI if set, the one
 * our state file says we started, a new mongod if one is on PATH, or else a
 * new FerretDB (SQLite backend) built from scripts/ferretdb.
 */
export async function ensureMongo(ctx: StackContext): Promise<ComponentView> {
  const log: Log = (line) => ctx.log(`mongo: ${line}`);
  const external = ctx.env.MONGODB_URI?.trim();
  if (external) return useExternalMongo(external);
  const port = mongoPort(ctx.env);
  return (await reuseRecordedMongo(ctx.paths, port, log)) ?? (await startMongo(ctx, port, log));
}

async function useExternalMongo(uri: string): Promise<ComponentView> {
  try {
    await pingMongo(uri, 5_000);
  } catch (error) {
    throw new ExternalServerUnreachableError(
      `MONGODB_URI=${redactUri(uri)} is set but did not answer a ping (${errorMessage(error)}); ` +
        'start that server, or unset MONGODB_URI to let durable-agent start a local one',
    );
  }
  return {
    name: 'mongo',
    kind: 'external',
    state: 'external',
    origin: 'external',
    pid: null,
    address: redactUri(uri),
    logFile: null,
    note: 'from MONGODB_URI',
  };
}

async function reuseRecordedMongo(paths: StackPaths, port: number, log: Log): Promise<ComponentView | null> {
  const record = readState(paths).mongo;
  if (!record) return null;
  const mismatch = pidFileMismatch(paths, 'mongo', record.pid);
  if (mismatch) log(mismatch);
  if (!isOurProcess(record.pid, record.argv)) {
    log(
      isRunning(record.pid)
        ? `pid ${record.pid} from ${paths.stateFile} is now another program; forgetting it`
        : `the ${record.kind} started earlier (pid ${record.pid}) is gone; starting a new one`,
    );
    clearComponent(paths, 'mongo');
    return null;
  }
  if (record.port !== port) {
    throw new StackConfigError(
      `the ${record.kind} durable-agent started (pid ${record.pid}) listens on ${record.port}, ` +
        `but MONGO_PORT asks for ${port}; run stack:down first to move it`,
    );
  }
  await waitForMongo({
    uri: record.uri,
    timeoutMs: REUSE_TIMEOUT_MS,
    stillRunning: () => isRunning(record.pid),
    explain: (message) => withLogTail(`${message}; run stack:down and stack:up to restart it`, record.logFile, 0),
  });
  return mongoView(record, 'reused');
}

async function startMongo(ctx: StackContext, port: number, log: Log): Promise<ComponentView> {
  const { paths, env } = ctx;
  await assertPortFree(port, 'MONGO_PORT / MONGODB_URI');
  const mongod = findOnPath('mongod', env);
  const kind: MongoRecord['kind'] = mongod ? 'mongod' : 'ferretdb';
  const dataDir = mongod ? paths.mongodDataDir : paths.ferretdbDataDir;
  fs.mkdirSync(dataDir, { recursive: true });
  const argv = mongod
    ? [mongod, '--dbpath', dataDir, '--bind_ip', LOOPBACK, '--port', String(port)]
    : [
        await ensureFerretdbBinary(paths, env, log),
        '--listen-addr',
        `${LOOPBACK}:${port}`,
        '--sqlite-dir',
        dataDir,
        // FerretDB logs each connection and each driver's endSessions at
        // info/warn; errors are what a developer needs from this log.
        '--log-level',
        'error',
      ];
  const logFile = logFileFor(paths, kind);
  const offset = markLogStart(logFile, argv);
  log(`starting ${kind} on ${LOOPBACK}:${port} (log: ${logFile})`);
  const pid = await spawnDetached({ argv, logFile, cwd: paths.root, env });
  const record: MongoRecord = {
    kind,
    pid,
    argv,
    port,
    address: `${LOOPBACK}:${port}`,
    uri: `mongodb://${LOOPBACK}:${port}`,
    logFile,
    startedAt: new Date().toISOString(),
    dataDir,
  };
  // Recorded before the health wait so that even a hung start can be stopped by stack:down.
  saveComponent(paths, 'mongo', record);
  try {
    await waitForMongo({
      uri: record.uri,
      timeoutMs: START_TIMEOUT_MS,
      stillRunning: () => isRunning(pid),
      explain: (message) => withLogTail(message, logFile, offset),
    });
  } catch (error) {
    await terminate(pid, 5_000);
    clearComponent(paths, 'mongo');
    throw error;
  }
  return mongoView(record, 'started');
}

export function mongoView(record: MongoRecord, origin?: ComponentView['origin']): ComponentView {
  return {
    name: 'mongo',
    kind: record.kind,
    state: 'running',
    ...(origin ? { origin } : {}),
    pid: record.pid,
    address: record.uri,
    logFile: record.logFile,
    dataPath: record.dataDir,
  };
}
