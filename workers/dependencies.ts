import { NativeConnection } from '@temporalio/worker';
import { temporalTransportOptions } from './temporal-connection-options';
import { MongoClient, type MongoClientOptions } from 'mongodb';
import { mongoAddress, type RuntimeConfig } from './config';

/**
 * A service the worker needs did not answer at start. The message is one line
 * naming the service and its address (never credentials) and what to check;
 * the entry point prints it and exits non-zero.
 */
export class DependencyUnreachableError extends Error {
  readonly type = 'DependencyUnreachable';
  override readonly name = 'DependencyUnreachableError';
  constructor(
    readonly service: 'MongoDB' | 'Temporal server',
    readonly address: string,
    detail: string,
    fix: string,
  ) {
    super(`${service} at ${address} is unreachable (${detail}). ${fix}`);
  }
}

/** The first line of an error's message and its cause's, without the driver's multi-line dumps. */
function briefly(err: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const line = e.message.split('\n')[0]?.trim();
    if (line && !parts.some((p) => p.includes(line))) parts.push(line);
  }
  return parts.join(': ').slice(0, 300) || String(err);
}

/**
 * Driver options for the worker's MongoDB client. Server selection fails
 * within `serverSelectionTimeoutMs` (below the tool timeout), so an outage
 * reaches a tool as "database unreachable", not as a tool timeout.
 */
export function mongoClientOptions(config: RuntimeConfig): MongoClientOptions {
  const bound = config.mongodb.serverSelectionTimeoutMs;
  return { serverSelectionTimeoutMS: bound, connectTimeoutMS: bound };
}

/** Connects and pings MongoDB, or throws a DependencyUnreachableError naming the address. */
export async function connectMongo(config: RuntimeConfig): Promise<MongoClient> {
  const mongo = new MongoClient(config.mongodb.uri, mongoClientOptions(config));
  try {
    await mongo.connect();
    await mongo.db(config.mongodb.database).command({ ping: 1 });
    return mongo;
  } catch (err) {
    await mongo.close().catch(() => undefined);
    throw new DependencyUnreachableError(
      'MongoDB',
      mongoAddress(config.mongodb.uri),
      briefly(err),
      'Check that the server runs (npm run stack:status for the local stack) and that MONGODB_URI points at it.',
    );
  }
}

/** Connects to the Temporal server within `temporal.connectTimeoutMs`, or throws a DependencyUnreachableError naming the address. */
export async function connectTemporal(config: RuntimeConfig): Promise<NativeConnection> {
  const { address, connectTimeoutMs } = config.temporal;
  const fix = 'Check that the server runs (npm run stack:status for the local stack) and that TEMPORAL_ADDRESS points at it.';
  let timer: NodeJS.Timeout | undefined;
  // TLS, mTLS and API key from configuration; a file that cannot be read fails here, naming its variable.
  const connecting = NativeConnection.connect({ address, ...temporalTransportOptions(config.temporal) });
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${connectTimeoutMs} ms`)), connectTimeoutMs);
  });
  try {
    return await Promise.race([connecting, timeout]);
  } catch (err) {
    // A connection that succeeds after we gave up must not keep the process alive.
    void connecting.then((c) => c.close()).catch(() => undefined);
    throw new DependencyUnreachableError('Temporal server', address, briefly(err), fix);
  } finally {
    clearTimeout(timer);
  }
}
