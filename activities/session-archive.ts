import { ApplicationFailure } from '@temporalio/common';
import type { Db, MongoServerError } from 'mongodb';
import { z } from 'zod';
import { FailureType } from '../workflows/failure-types';
import { SessionSummary } from '../workflows/session-summary';
import { SessionCounters, Turn, UserNamespace } from '../workflows/session-types';

export const SESSIONS_COLLECTION = 'sessions';

export const ToolCallRecord = z.object({
  turnId: z.string(),
  toolCallId: z.string(),
  toolName: z.string(),
  status: z.enum(['ok', 'failed', 'declined', 'rejected']),
  durationMs: z.number(),
  arguments: z.string().max(300),
  result: z.string().max(300),
});
export type ToolCallRecord = z.infer<typeof ToolCallRecord>;

export const KeyFactDoc = z.object({
  subject: z.string(),
  value: z.string(),
  turnId: z.string(),
  updatedAt: z.string(),
  source: z.enum(['user', 'tool']),
});

/** A tool as the session pinned it (see workflows/tool-pins.ts); the schema is JSON text, as MongoDB refuses keys like `$ref`. */
export const ArchivedToolPin = z.object({
  name: z.string(),
  hash: z.string(),
  description: z.string().optional(),
  parametersJson: z.string().optional(),
});

/** What an archived session keeps: enough to continue seamlessly, never the whole raw history. */
export const ArchivedSession = z.object({
  sessionId: z.string(),
  namespace: UserNamespace,
  channel: z.string(),
  metadata: z.record(z.string(), z.string()),
  createdAt: z.string(),
  archivedAt: z.string(),
  expiresAt: z.string(),
  status: z.enum(['archived', 'expired']),
  version: z.number().int().min(0),
  turnSeq: z.number().int().min(0),
  window: z.array(Turn),
  summary: SessionSummary,
  keyFacts: z.array(KeyFactDoc),
  toolCalls: z.array(ToolCallRecord),
  counters: SessionCounters,
  /** Tools as the session pinned them; absent in archives written before pins were kept (restored as no pins). */
  toolPins: z.array(ArchivedToolPin).optional(),
});
export type ArchivedSession = z.infer<typeof ArchivedSession>;

export interface SaveArchiveInput {
  archive: ArchivedSession;
  /** The version this run restored from (0 for a new session): the write succeeds only if the stored one is still it. */
  baseVersion: number;
}

const isDuplicateKey = (err: unknown) => (err as MongoServerError | undefined)?.code === 11000;

/** Archived sessions in MongoDB, written conditionally on the version. */
export class SessionArchiveRepository {
  constructor(private readonly db: Db) {}

  private get collection() {
    return this.db.collection<{ _id: string } & Record<string, unknown>>(SESSIONS_COLLECTION);
  }

  async ensureIndexes(): Promise<void> {
    await this.collection.createIndex({ status: 1, expiresAt: 1 });
    await this.collection.createIndex({ 'namespace.tenant': 1, 'namespace.user': 1, archivedAt: -1 });
  }

  async load(sessionId: string): Promise<ArchivedSession | null> {
    const doc = await this.collection.findOne({ _id: sessionId });
    if (!doc) return null;
    const { _id, ...rest } = doc;
    const parsed = ArchivedSession.safeParse(rest);
    if (!parsed.success) {
      const fields = parsed.error.issues.slice(0, 5).map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
      throw ApplicationFailure.nonRetryable(`Archived session ${_id} in MongoDB is malformed (${fields}); fix or delete the document in "${SESSIONS_COLLECTION}".`, 'ArchiveInvalid');
    }
    return parsed.data;
  }

  /**
   * Compare-and-set on the version: two runs restored from the same archive
   * cannot both write theirs. The loser gets a `SessionVersionConflict`.
   */
  async save({ archive, baseVersion }: SaveArchiveInput): Promise<{ version: number }> {
    const doc = ArchivedSession.parse(archive);
    const filter = baseVersion === 0 ? { _id: archive.sessionId, version: { $in: [0, null] } } : { _id: archive.sessionId, version: baseVersion };
    try {
      const res = await this.collection.updateOne(filter as never, { $set: doc }, { upsert: true });
      if (res.matchedCount === 0 && res.upsertedCount === 0) throw new Error('no document written');
    } catch (err) {
      if (!isDuplicateKey(err) && !(err instanceof Error && err.message === 'no document written')) throw err;
      const current = await this.collection.findOne({ _id: archive.sessionId }, { projection: { version: 1 } });
      throw ApplicationFailure.create({
        message: `Archive of session ${archive.sessionId} was written by another run (stored version ${String(current?.version)}, this run restored version ${baseVersion}).`,
        type: FailureType.SessionVersionConflict,
        nonRetryable: true,
        details: [{ currentVersion: current?.version ?? null, expectedVersion: baseVersion }],
      });
    }
    return { version: doc.version };
  }

  /** Marks archives past their retention as expired and purges their content, keeping a tombstone. */
  async expire(now: Date): Promise<{ expired: number }> {
    const res = await this.collection.updateMany(
      { status: 'archived', expiresAt: { $lt: now.toISOString() } },
      { $set: { status: 'expired', window: [], keyFacts: [], toolCalls: [], toolPins: [], summary: SessionSummary.parse({}), expiredAt: now.toISOString() } },
    );
    return { expired: res.modifiedCount };
  }
}
