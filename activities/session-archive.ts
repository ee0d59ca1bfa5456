import { ApplicationFailure } from '@temporalio/common';
import type { Db, MongoServerError } from 'mongodb';
import { z } from 'zod';
import { FailureType } from '../workflows/failure-types';
import { KeyFact } from '../workflows/key-facts';
import { SessionSummary } from '../workflows/session-summary';
import { hasTenantRole, type Principal } from '../workflows/principal';
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

/** A tool as the session pinned it (see workflows/tool-pins.ts); the schema is JSON text, as MongoDB refuses keys like `$ref`. */
export const ArchivedToolPin = z.object({
  name: z.string(),
  hash: z.string(),
  description: z.string().optional(),
  parametersJson: z.string().optional(),
});

/**
 * The session's last events, as readers saw them: each event as JSON text
 * (MongoDB refuses keys like `$ref`, which tool arguments may hold), with its
 * stream offset. `nextOffset` is where a restored run's stream continues, so
 * offsets never repeat over the session's life.
 */
export const ArchivedEvents = z.object({
  nextOffset: z.number().int().min(0),
  items: z.array(z.object({ offset: z.number().int().min(0), json: z.string() })),
});
export type ArchivedEvents = z.infer<typeof ArchivedEvents>;

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
  keyFacts: z.array(KeyFact),
  toolCalls: z.array(ToolCallRecord),
  counters: SessionCounters,
  /** Tools as the session pinned them; absent in archives written before pins were kept (restored as no pins). */
  toolPins: z.array(ArchivedToolPin).optional(),
  /** The last events (absent in archives written before events were kept). */
  events: ArchivedEvents.optional(),
});
export type ArchivedSession = z.infer<typeof ArchivedSession>;

export interface ReadArchivedEventsInput {
  sessionId: string;
  fromOffset: number;
  limit: number;
  principal: Principal;
}

export interface ArchivedEventsPage {
  status: 'archived' | 'expired';
  owner: UserNamespace;
  /** The earliest offset the archive keeps (nextOffset when it keeps none). */
  earliestOffset: number;
  nextOffset: number;
  items: Array<{ offset: number; json: string }>;
}

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
      const current = await this.collection.findOne({ _id: archive.sessionId }, { projection: { version: 1, archivedAt: 1 } });
      // A retry of a save that landed (a worker killed after the write, a timeout after it) finds its own archive.
      if (current?.version === doc.version && current.archivedAt === doc.archivedAt) return { version: doc.version };
      throw ApplicationFailure.create({
        message: `Archive of session ${archive.sessionId} was written by another run (stored version ${String(current?.version)}, this run restored version ${baseVersion}).`,
        type: FailureType.SessionVersionConflict,
        nonRetryable: true,
        details: [{ currentVersion: current?.version ?? null, expectedVersion: baseVersion }],
      });
    }
    return { version: doc.version };
  }

  /**
   * The archived events from `fromOffset` on, for a reader the session's
   * owner, or an approver or admin of its tenant, is. Null when there is no
   * archive; `NotAuthorized` for anyone else (nothing of the session returned).
   */
  async readEvents(input: ReadArchivedEventsInput): Promise<ArchivedEventsPage | null> {
    const doc = await this.collection.findOne({ _id: input.sessionId }, { projection: { namespace: 1, status: 1, events: 1 } });
    if (!doc) return null;
    const owner = UserNamespace.safeParse(doc.namespace);
    if (!owner.success) throw ApplicationFailure.nonRetryable(`Archived session ${input.sessionId} in MongoDB has no valid namespace; fix or delete the document in "${SESSIONS_COLLECTION}".`, 'ArchiveInvalid');
    const p = input.principal;
    const mine = p.tenant === owner.data.tenant && p.user === owner.data.user;
    if (!mine && !hasTenantRole(owner.data.tenant, p, 'approver')) {
      throw ApplicationFailure.create({
        message: `Not authorized: ${p.tenant}/${p.user} may not read session ${input.sessionId}; its owner, or an approver or admin of the owner's tenant, may.`,
        type: FailureType.NotAuthorized,
        nonRetryable: true,
      });
    }
    const events = ArchivedEvents.safeParse(doc.events ?? { nextOffset: 0, items: [] });
    const kept = events.success ? events.data : { nextOffset: 0, items: [] };
    const earliestOffset = kept.items[0]?.offset ?? kept.nextOffset;
    const items = kept.items.filter((i) => i.offset >= input.fromOffset).slice(0, input.limit);
    return { status: doc.status === 'expired' ? 'expired' : 'archived', owner: owner.data, earliestOffset, nextOffset: kept.nextOffset, items };
  }

  /** Marks archives past their retention as expired and purges their content, keeping a tombstone. */
  async expire(now: Date): Promise<{ expired: number }> {
    const res = await this.collection.updateMany(
      { status: 'archived', expiresAt: { $lt: now.toISOString() } },
      { $set: { status: 'expired', window: [], keyFacts: [], toolCalls: [], toolPins: [], events: { nextOffset: 0, items: [] }, summary: SessionSummary.parse({}), expiredAt: now.toISOString() } },
    );
    return { expired: res.modifiedCount };
  }
}
