import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApplicationFailure } from '@temporalio/common';
import { MongoClient, type Db } from 'mongodb';
import { MEETINGS_COLLECTION, meetingTools } from '../../activities/tools/meeting-tools';
import type { ToolRunContext } from '../../activities/tools/native-tool';
import { toolFailure } from '../../activities/tools/tool-errors';
import { nativeRunnable, type RunnableTool } from '../../activities/tools/tool-registry';
import { loadConfig } from '../../workers/config';
import { mongoClientOptions } from '../../workers/dependencies';
import { FailureType } from '../../workflows/failure-types';
import { uniqueId } from '../support/test-env';

const namespace = { tenant: 'acme', user: 'ana' };
const context = (idempotencyKey: string): ToolRunContext => ({
  signal: new AbortController().signal,
  idempotencyKey,
  sessionId: 's-meetings',
  namespace,
  heartbeat: () => undefined,
});

function byName(db: Db): Map<string, RunnableTool> {
  return new Map(meetingTools(db).map((t) => nativeRunnable(t)).map((r) => [r.spec.name, r]));
}

/** Validates with the tool's own schema, then runs it, as the tool activity does. */
async function call(tools: Map<string, RunnableTool>, name: string, args: unknown, key = uniqueId('key')): Promise<Record<string, unknown>> {
  const tool = tools.get(name);
  if (!tool) throw new Error(`no tool ${name}`);
  const parsed = tool.parse(args);
  if (!parsed.ok) throw ApplicationFailure.nonRetryable(`Invalid arguments: ${parsed.message}`, FailureType.ToolInputInvalid);
  try {
    return (await tool.run(parsed.value, context(key))) as Record<string, unknown>;
  } catch (err) {
    throw toolFailure(err, name);
  }
}

describe('meeting tools on the bundled MongoDB-compatible server', () => {
  let mongo: MongoClient;
  let db: Db;
  let tools: Map<string, RunnableTool>;

  beforeAll(async () => {
    const config = loadConfig({ ...process.env, OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' });
    mongo = await new MongoClient(config.mongodb.uri).connect();
    db = mongo.db(uniqueId('t_meetings').replace(/-/g, '_'));
    tools = byName(db);
  });
  afterAll(async () => {
    await db.dropDatabase().catch(() => undefined);
    await mongo.close();
  });

  it('creates a meeting without attendees, and a retry with the same key returns it instead of a duplicate', async () => {
    const args = { subject: 'Solo focus', start_time: '2025-03-18T14:00:00+01:00', end_time: '2025-03-18T14:30:00+01:00' };
    const first = await call(tools, 'local_create_meeting', args, 'sess:turn-1:0:call_0');
    expect(first).toMatchObject({ created: true, meeting: { subject: 'Solo focus', attendees: [], startTime: '2025-03-18T13:00:00.000Z' } });
    const retry = await call(tools, 'local_create_meeting', args, 'sess:turn-1:0:call_0');
    expect(retry).toEqual(first);
    expect(await db.collection(MEETINGS_COLLECTION).countDocuments({ subject: 'Solo focus' })).toBe(1);
    const listed = await call(tools, 'local_list_meetings', {});
    expect(listed).toMatchObject({ count: 1, meetings: [{ subject: 'Solo focus', attendees: [] }] });
  });

  it('reads a stored meeting whose attendees were dropped as having none', async () => {
    const meetings = db.collection(MEETINGS_COLLECTION);
    await meetings.insertOne({
      _id: 'mtg_00000000aaaa' as never,
      ...namespace,
      subject: 'Written by the old upsert',
      startTime: new Date('2025-04-01T09:00:00Z'),
      endTime: new Date('2025-04-01T09:30:00Z'),
      status: 'scheduled',
      createdBySession: 'old',
      idempotencyKey: 'old-key',
      createdAt: new Date(),
    });
    const listed = await call(tools, 'local_list_meetings', { from: '2025-04-01T00:00:00Z' });
    expect(listed).toMatchObject({ count: 1, meetings: [{ meetingId: 'mtg_00000000aaaa', attendees: [] }] });
    expect(listed).not.toHaveProperty('unreadable');
  });

  it('skips a malformed stored meeting, lists the rest and says how many could not be read', async () => {
    const meetings = db.collection(MEETINGS_COLLECTION);
    await call(tools, 'local_create_meeting', {
      subject: 'Readable',
      start_time: '2025-05-02T10:00:00Z',
      end_time: '2025-05-02T11:00:00Z',
      attendees: ['bo@example.com'],
    });
    await meetings.insertOne({ _id: 'mtg_00000000bbbb' as never, ...namespace, subject: 42, startTime: new Date('2025-05-01T10:00:00Z'), status: 'scheduled' });
    const listed = await call(tools, 'local_list_meetings', { from: '2025-05-01T00:00:00Z' });
    expect(listed).toMatchObject({ count: 1, meetings: [{ subject: 'Readable', attendees: ['bo@example.com'] }], unreadable: 1 });
    expect(String(listed.note)).toMatch(/^1 stored meeting could not be read/);
  });

  it('refuses a date-time without an offset and says to add one', async () => {
    const attempt = call(tools, 'local_create_meeting', { subject: 'Ambiguous', start_time: '2025-03-18T14:00:00', end_time: '2025-03-18T15:00:00+01:00' });
    await expect(attempt).rejects.toMatchObject({ type: FailureType.ToolInputInvalid });
    await expect(attempt).rejects.toThrow(/start_time: must be an ISO 8601 date-time with a UTC offset.*add the offset/);
    await expect(call(tools, 'local_list_meetings', { from: '2025-03-18T14:00:00' })).rejects.toThrow(/from: .*add the offset/);
    expect(await db.collection(MEETINGS_COLLECTION).countDocuments({ subject: 'Ambiguous' })).toBe(0);
  });
});

describe('meeting tools while MongoDB is unreachable', () => {
  it('fail well before the tool timeout with an error that says the database is unreachable and what to do', async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const { port } = probe.address() as AddressInfo;
    await new Promise((resolve) => probe.close(resolve));
    const config = loadConfig({ ...process.env, OPENAI_BASE_URL: 'http://127.0.0.1:9/v1', MONGODB_URI: `mongodb://127.0.0.1:${port}` });
    const mongo = new MongoClient(config.mongodb.uri, mongoClientOptions(config));
    try {
      const tools = byName(mongo.db('unreachable'));
      const started = Date.now();
      const failure = await call(tools, 'local_list_meetings', {}).then(
        () => undefined,
        (err: unknown) => err as ApplicationFailure,
      );
      const elapsed = Date.now() - started;
      expect(failure).toBeInstanceOf(ApplicationFailure);
      expect(failure?.type).toBe(FailureType.ToolFailed);
      expect(failure?.nonRetryable).toBe(true);
      expect(failure?.message).toMatch(/local_list_meetings: the database \(MongoDB\) is unreachable .*127\.0\.0\.1:\d+.*Next step: tell the user/);
      expect(elapsed).toBeLessThan(config.limits.toolTimeoutMs / 2);
    } finally {
      await mongo.close();
    }
  });
});
