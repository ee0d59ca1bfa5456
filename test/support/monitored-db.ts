import { randomUUID } from 'node:crypto';
import { MongoClient, type CommandStartedEvent, type Db } from 'mongodb';

/**
 * A database of its own on the stack's MongoDB-compatible server, through a
 * client that records the commands named in `watch` sent to it (counted by
 * tests of what shares one command).
 */
async function openMonitoredDb(name: string, watch: string[]): Promise<{ db: Db; commands: CommandStartedEvent[]; close(): Promise<void> }> {
  const uri = process.env.MONGODB_URI;
  if (!uri) throw new Error('MONGODB_URI is not set: run the tests through jest, whose global setup starts the stack');
  const mongo = await new MongoClient(uri, { monitorCommands: true }).connect();
  const db = mongo.db(`t_${name}_${randomUUID().slice(0, 8)}`);
  const commands: CommandStartedEvent[] = [];
  mongo.on('commandStarted', (e) => {
    if (watch.includes(e.commandName) && e.databaseName === db.databaseName) commands.push(e);
  });
  return {
    db,
    commands,
    async close() {
      await db.dropDatabase().catch(() => undefined);
      await mongo.close();
    },
  };
}

/** `openMonitoredDb` for one test file: opened before its tests, dropped after; `db` and `commands` are set once opened. */
export function useMonitoredDb(name: string, watch: string[]): { db: Db; commands: CommandStartedEvent[] } {
  const handle = { db: undefined as unknown as Db, commands: [] as CommandStartedEvent[] };
  let close: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    const opened = await openMonitoredDb(name, watch);
    handle.db = opened.db;
    handle.commands = opened.commands;
    close = opened.close;
  });
  afterAll(async () => close?.());
  return handle;
}
