import { MongoClient } from 'mongodb';
import { errorMessage, StartupFailedError } from './errors';
import { sleep } from './wait';

/** One `ping` through the real driver: proves the wire protocol works, not just the port. */
export async function pingMongo(uri: string, timeoutMs: number): Promise<void> {
  const client = new MongoClient(uri, {
    serverSelectionTimeoutMS: timeoutMs,
    connectTimeoutMS: timeoutMs,
    socketTimeoutMS: timeoutMs,
  });
  try {
    await client.connect();
    await client.db('admin').command({ ping: 1 });
  } finally {
    await client.close();
  }
}

export interface WaitForMongoOptions {
  uri: string;
  timeoutMs: number;
  stillRunning?: () => boolean;
  explain?: (message: string) => string;
}

export async function waitForMongo(options: WaitForMongoOptions): Promise<void> {
  const explain = options.explain ?? ((message: string) => message);
  const deadline = Date.now() + options.timeoutMs;
  let lastError = 'no answer yet';
  for (;;) {
    if (options.stillRunning && !options.stillRunning()) {
      throw new StartupFailedError(explain(`the MongoDB-compatible server exited while starting (last ping: ${lastError})`));
    }
    try {
      await pingMongo(options.uri, 2_000);
      return;
    } catch (error) {
      lastError = errorMessage(error);
    }
    if (Date.now() > deadline) {
      throw new StartupFailedError(
        explain(`${redactUri(options.uri)} did not answer a ping within ${Math.round(options.timeoutMs / 1000)}s (last error: ${lastError})`),
      );
    }
    await sleep(500);
  }
}

/** Hides the password of a connection string in messages and logs. */
export function redactUri(uri: string): string {
  return uri.replace(/\/\/([^:@/]+):([^@/]+)@/, '//$1:***@');
}
