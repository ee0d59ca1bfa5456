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

/** Where each archive's content (window, summary, facts, tool calls, pins, events) is kept, apart from its header. */
export const SESSION_CONTENTS_COLLECTION = 'session_contents';

/** The fields of an archive kept in its content document; the rest is its header in `sessions`. */
const CONTENT_FIELDS = ['window', 'summary', 'keyFacts', 'toolCalls', 'toolPins', 'events'] as const;
type ContentField = (typeof CONTENT_FIELDS)[number];
type ArchiveContent = Pick<ArchivedSession, ContentField>;

/** What an expired archive (or one whose content was purged) restores as: nothing but its header. */
function emptyContent(): ArchiveContent {
  return { window: [], summary: SessionSummary.parse({}), keyFacts: [], toolCalls: [], toolPins: [], events: { nextOffset: 0, items: [] } };
}

const unsetContent = Object.fromEntries(CONTENT_FIELDS.map((f) => [f, ''])) as Record<ContentField, ''>;

/**
 * Archived sessions in MongoDB, written conditionally on the version.
 *
 * Each archive is a small header in `sessions` (`_id` = session id: owner,
 * status, version, expiry, counters) and its content in `session_contents`
 * (`_id` = `<sessionId>/<version>/<archivedAt>`, written before the header
 * names it). The split is for FerretDB, the local stack's server: it answers
 * only a filter on `_id` alone from an index and reads every document of the
 * collection for any other, so the version check of each save and the
 * expiry sweep read every archive's header, which must stay small. With the
 * content inline (65 KB for a ten-turn session), each save read all of them:
 * 0.7 s of FerretDB's CPU with 55 sessions archived, growing with each one.
 * Headers written before the split still carry their content inline; they
 * are read as they are, and a save moves the content out.
 */
export class SessionArchiveRepository {
  constructor(private readonly db: Db) {}

  private get collection() {
    return this.db.collection<{ _id: string } & Record<string, unknown>>(SESSIONS_COLLECTION);
  }

  private get contents() {
    return this.db.collection<{ _id: string } & Record<string, unknown>>(SESSION_CONTENTS_COLLECTION);
  }

  async ensureIndexes(): Promise<void> {
    await this.collection.createIndex({ status: 1, expiresAt: 1 });
    await this.collection.createIndex({ 'namespace.tenant': 1, 'namespace.user': 1, archivedAt: -1 });
  }

  async load(sessionId: string): Promise<ArchivedSession | null> {
    const doc = await this.collection.findOne({ _id: sessionId });
    if (!doc) return null;
    const { _id, contentId, ...header } = doc;
    const content = await this.contentOf(_id, header, contentId);
    const parsed = ArchivedSession.safeParse({ ...header, ...content });
    if (!parsed.success) {
      const fields = parsed.error.issues.slice(0, 5).map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
      throw ApplicationFailure.nonRetryable(`Archived session ${_id} in MongoDB is malformed (${fields}); fix or delete the document in "${SESSIONS_COLLECTION}".`, 'ArchiveInvalid');
    }
    return parsed.data;
  }

  /** The content a header names; inline (a header from before the split) or nothing (expired) when it names none. */
  private async contentOf(sessionId: string, header: Record<string, unknown>, contentId: unknown, projection?: Record<string, 1>): Promise<Partial<ArchiveContent>> {
    if (typeof contentId !== 'string') return header.status === 'expired' ? emptyContent() : {};
    const found = await this.contents.findOne({ _id: contentId }, projection ? { projection } : {});
    if (!found) {
      if (header.status === 'expired') return emptyContent();
      throw ApplicationFailure.nonRetryable(
        `Archived session ${sessionId} names content ${contentId}, which is not in "${SESSION_CONTENTS_COLLECTION}"; restore it, or delete the session's document in "${SESSIONS_COLLECTION}".`,
        'ArchiveInvalid',
      );
    }
    const { _id, sessionId: _s, ...content } = found;
    return content as Partial<ArchiveContent>;
  }

  /**
   * Compare-and-set on the version: two runs restored from the same archive
   * cannot both write theirs. The loser gets a `SessionVersionConflict`.
   * The content goes first, under an id of its own; the header's
   * conditional write then names it, and the content it named before is
   * deleted. A run that dies between the two leaves its content unnamed
   * (only bytes); a loser deletes its own.
   */
  async save({ archive, baseVersion }: SaveArchiveInput): Promise<{ version: number }> {
    const doc = ArchivedSession.parse(archive);
    const content = Object.fromEntries(CONTENT_FIELDS.flatMap((f) => (doc[f] === undefined ? [] : [[f, doc[f]]])));
    const header = Object.fromEntries(Object.entries(doc).filter(([k]) => !(CONTENT_FIELDS as readonly string[]).includes(k)));
    const contentId = `${doc.sessionId}/${doc.version}/${doc.archivedAt}`;
    const before = await this.collection.findOne({ _id: doc.sessionId }, { projection: { version: 1, archivedAt: 1, contentId: 1 } });
    // A retry of a save that landed (a worker killed after the write, a timeout after it) finds its own archive.
    if (before?.version === doc.version && before.archivedAt === doc.archivedAt) return { version: doc.version };
    await this.contents.replaceOne({ _id: contentId }, { sessionId: doc.sessionId, ...content }, { upsert: true });
    const filter = baseVersion === 0 ? { _id: doc.sessionId, version: { $in: [0, null] } } : { _id: doc.sessionId, version: baseVersion };
    try {
      const res = await this.collection.updateOne(filter as never, { $set: { ...header, contentId }, $unset: unsetContent }, { upsert: true });
      if (res.matchedCount === 0 && res.upsertedCount === 0) throw new Error('no document written');
    } catch (err) {
      if (!isDuplicateKey(err) && !(err instanceof Error && err.message === 'no document written')) throw err;
      const current = await this.collection.findOne({ _id: doc.sessionId }, { projection: { version: 1, archivedAt: 1 } });
      if (current?.version === doc.version && current.archivedAt === doc.archivedAt) return { version: doc.version };
      await this.contents.deleteOne({ _id: contentId }).catch(() => undefined);
      throw ApplicationFailure.create({
        message: `Archive of session ${archive.sessionId} was written by another run (stored version ${String(current?.version)}, this run restored version ${baseVersion}).`,
        type: FailureType.SessionVersionConflict,
        nonRetryable: true,
        details: [{ currentVersion: current?.version ?? null, expectedVersion: baseVersion }],
      });
    }
    // The content the header named before is read by no one now; left behind if this fails, it is only bytes.
    if (typeof before?.contentId === 'string' && before.contentId !== contentId) await this.contents.deleteOne({ _id: before.contentId }).catch(() => undefined);
    return { version: doc.version };
  }

  /**
   * The archived events from `fromOffset` on, for a reader the session's
   * owner, or an approver or admin of its tenant, is. Null when there is no
   * archive; `NotAuthorized` for anyone else (nothing of the session returned).
   */
  async readEvents(input: ReadArchivedEventsInput): Promise<ArchivedEventsPage | null> {
    const doc = await this.collection.findOne({ _id: input.sessionId }, { projection: { namespace: 1, status: 1, events: 1, contentId: 1 } });
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
    // Read only once the reader may: an archive from before the split has its events in the header.
    const stored = doc.contentId === undefined ? doc.events : (await this.contentOf(input.sessionId, doc, doc.contentId, { events: 1 })).events;
    const events = ArchivedEvents.safeParse(stored ?? { nextOffset: 0, items: [] });
    const kept = events.success ? events.data : { nextOffset: 0, items: [] };
    const earliestOffset = kept.items[0]?.offset ?? kept.nextOffset;
    const items = kept.items.filter((i) => i.offset >= input.fromOffset).slice(0, input.limit);
    return { status: doc.status === 'expired' ? 'expired' : 'archived', owner: owner.data, earliestOffset, nextOffset: kept.nextOffset, items };
  }

  /**
   * Moves the content of headers written before the split (inline) to
   * `session_contents`, up to `limit` of them: until then each save's
   * version check reads them whole on FerretDB. Each move is conditional on
   * the header being as it was read, so a save at the same moment wins.
   * Returns how many moved.
   */
  async moveInlineContent(limit: number): Promise<number> {
    const inline = await this.collection.find({ window: { $exists: true } }, { projection: { _id: 1 } }).limit(limit).toArray();
    let moved = 0;
    for (const { _id } of inline) {
      const doc = await this.collection.findOne({ _id });
      if (!doc || doc.contentId !== undefined || doc.window === undefined) continue;
      const content = Object.fromEntries(CONTENT_FIELDS.flatMap((f) => (doc[f] === undefined ? [] : [[f, doc[f]]])));
      const contentId = `${_id}/${String(doc.version)}/${String(doc.archivedAt)}`;
      await this.contents.replaceOne({ _id: contentId }, { sessionId: _id, ...content }, { upsert: true });
      const res = await this.collection.updateOne(
        { _id, version: doc.version, archivedAt: doc.archivedAt, contentId: { $exists: false } } as never,
        { $set: { contentId }, $unset: unsetContent },
      );
      if (res.modifiedCount === 1) moved += 1;
      else await this.contents.deleteOne({ _id: contentId });
    }
    return moved;
  }

  /**
   * Marks archives past their retention as expired and purges their content,
   * keeping the header as a tombstone (it restores as an empty session).
   */
  async expire(now: Date): Promise<{ expired: number }> {
    const due = { status: 'archived', expiresAt: { $lt: now.toISOString() } };
    const named = await this.collection.find(due, { projection: { contentId: 1 } }).toArray();
    const res = await this.collection.updateMany(due, { $set: { status: 'expired', expiredAt: now.toISOString() }, $unset: { ...unsetContent, contentId: '' } });
    // By `_id` one at a time: FerretDB reads the whole collection for an `$in`. A content left behind is only bytes.
    for (const { contentId } of named) if (typeof contentId === 'string') await this.contents.deleteOne({ _id: contentId });
    return { expired: res.modifiedCount };
  }
}
