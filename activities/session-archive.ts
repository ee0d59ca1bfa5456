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
  /**
   * The message ids the session took last, with the turn each became: a
   * retry of a message whose answer was lost when the session closed is the
   * same turn, not a second one (absent in archives written before).
   */
  // Objects, not [id, turn] pairs: FerretDB stores no nested arrays.
  messageIds: z.array(z.object({ id: z.string(), turnId: z.string(), version: z.number().int() })).max(200).optional(),
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
const CONTENT_FIELDS = ['window', 'summary', 'keyFacts', 'toolCalls', 'toolPins', 'events', 'messageIds'] as const;
type ContentField = (typeof CONTENT_FIELDS)[number];
type ArchiveContent = Pick<ArchivedSession, ContentField>;

/** What an expired archive (or one whose content was purged) restores as: nothing but its header. */
function emptyContent(): ArchiveContent {
  return { window: [], summary: SessionSummary.parse({}), keyFacts: [], toolCalls: [], toolPins: [], events: { nextOffset: 0, items: [] }, messageIds: [] };
}

/** The content fields a document has, as they are. */
const contentFields = (doc: Record<string, unknown>): Record<string, unknown> => Object.fromEntries(CONTENT_FIELDS.flatMap((f) => (doc[f] === undefined ? [] : [[f, doc[f]]])));

/** Metadata without the keys FerretDB refuses in a document ("." inside, "$" first); MongoDB stores them. */
function storableMetadata(metadata: unknown): Record<string, unknown> {
  if (typeof metadata !== 'object' || metadata === null) return {};
  return Object.fromEntries(Object.entries(metadata).filter(([k]) => !k.includes('.') && !k.startsWith('$')));
}

/**
 * A stored header with its whole metadata: from `metadataJson`, unless a
 * worker of the version before saved the session since (it writes `metadata`
 * alone, which then no longer matches the text's storable part).
 */
function withMetadata(header: Record<string, unknown>): Record<string, unknown> {
  const { metadataJson, ...rest } = header;
  if (typeof metadataJson !== 'string') return rest;
  let whole: unknown;
  try {
    whole = JSON.parse(metadataJson);
  } catch {
    return { ...rest, metadata: metadataJson };
  }
  const stored = rest.metadata;
  if (stored !== undefined && JSON.stringify(stored) !== JSON.stringify(storableMetadata(whole))) return rest;
  return { ...rest, metadata: whole };
}

/** Archives one sweep expires, when it also deletes what their sessions left. */
const EXPIRED_PER_SWEEP = 1_000;

const unsetContent = Object.fromEntries(CONTENT_FIELDS.map((f) => [f, ''])) as Record<ContentField, ''>;

function versionConflict(sessionId: string, stored: unknown, baseVersion: number): ApplicationFailure {
  return ApplicationFailure.create({
    message: `Archive of session ${sessionId} was written by another run (stored version ${String(stored)}, this run restored version ${baseVersion}).`,
    type: FailureType.SessionVersionConflict,
    nonRetryable: true,
    details: [{ currentVersion: stored ?? null, expectedVersion: baseVersion }],
  });
}

/** How long a content written for a save that never named it stays, before the sweep deletes it (saves take seconds). */
const PENDING_CONTENT_GRACE_MS = 60 * 60_000;

/**
 * A `pending` entry: when the writer listed it (its own clock: a save can run
 * long after its archive time) and the content id, `<time> <contentId>`.
 */
const pendingEntry = (contentId: string): string => `${new Date().toISOString()} ${contentId}`;
const contentOfEntry = (entry: string): string => entry.slice(entry.indexOf(' ') + 1);
const listedAt = (entry: string): number => Date.parse(entry.slice(0, entry.indexOf(' ')));

const stringList = (value: unknown): string[] => (Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : []);

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
 *
 * No content is left behind: a save lists the content it writes in the
 * header's `pending` before writing it, and the content the header named
 * before in `purge` when it names the new one; the maintenance sweep
 * deletes what a save did not get to (pending for an hour and not named, or
 * purged). Headers with content inline (written before the split, or by a
 * worker from before it during an upgrade) are read as they are: inline
 * content wins over a named one. A save or the sweep moves it out.
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
    const read = await this.read(sessionId, undefined);
    if (!read) return null;
    const parsed = ArchivedSession.safeParse({ ...withMetadata(read.header), ...read.content });
    if (!parsed.success) {
      const fields = parsed.error.issues.slice(0, 5).map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
      throw ApplicationFailure.nonRetryable(`Archived session ${sessionId} in MongoDB is malformed (${fields}); fix or delete the document in "${SESSIONS_COLLECTION}".`, 'ArchiveInvalid');
    }
    return parsed.data;
  }

  /**
   * A header and the content it names, read as one: when the content is
   * gone because a save or the expiry sweep moved on between the two reads,
   * the header is read again. Null when there is no archive (or only the
   * `pending` list of a first save that has not landed). Content inline in
   * the header (`inline` says) or of an expired archive is not looked up.
   */
  private async read(
    sessionId: string,
    headerProjection: Record<string, 1> | undefined,
    contentProjection?: Record<string, 1>,
  ): Promise<{ header: Record<string, unknown>; content: Partial<ArchiveContent> } | null> {
    for (let look = 1; ; look++) {
      const doc = await this.collection.findOne({ _id: sessionId }, headerProjection ? { projection: headerProjection } : {});
      if (!doc || doc.version === undefined) return null;
      const { _id, contentId, pending: _p, purge: _u, ...header } = doc;
      if (header.status === 'expired') return { header, content: emptyContent() };
      // Every archive written inline has a summary (not every one has events): the mark of content in the header.
      if (doc.summary !== undefined || typeof contentId !== 'string') return { header, content: {} };
      const found = await this.contents.findOne({ _id: contentId }, contentProjection ? { projection: contentProjection } : {});
      if (found) {
        const { _id: _c, sessionId: _s, ...content } = found;
        return { header, content: content as Partial<ArchiveContent> };
      }
      const now = await this.collection.findOne({ _id: sessionId }, { projection: { contentId: 1, status: 1 } });
      if (now?.contentId !== contentId || now.status !== header.status) {
        if (look < 3) continue;
        throw ApplicationFailure.retryable(`Archived session ${sessionId} changed while it was read, three times; try again.`, 'ArchiveBusy');
      }
      throw ApplicationFailure.nonRetryable(
        `Archived session ${sessionId} names content ${contentId}, which is not in "${SESSION_CONTENTS_COLLECTION}"; restore it, or delete the session's document in "${SESSIONS_COLLECTION}".`,
        'ArchiveInvalid',
      );
    }
  }

  /**
   * Compare-and-set on the version and on the content the header named when
   * this save read it: two runs restored from the same archive cannot both
   * write theirs, and an attempt that lands late cannot name its content
   * over a newer save's, even one of the same version (a restored run that
   * took no turn archives the version it restored), and a save never
   * replaces an archive written after its own. The loser gets a
   * `SessionVersionConflict`; a retried save that landed gets its version.
   */
  async save({ archive, baseVersion }: SaveArchiveInput): Promise<{ version: number }> {
    const doc = ArchivedSession.parse(archive);
    const sessionId = doc.sessionId;
    const content = contentFields(doc);
    const { metadata, ...rest } = Object.fromEntries(Object.entries(doc).filter(([k]) => !(CONTENT_FIELDS as readonly string[]).includes(k))) as Record<string, unknown>;
    // Metadata keys are the caller's: FerretDB refuses a key with "." or one starting with "$" (MongoDB stores them),
    // and a refused save was tried every minute for ever, refusing the session's messages meanwhile. So it goes as text.
    // Both forms: workers of the version before read `metadata` (and require it), so it stays, without the keys FerretDB refuses.
    const header = { ...rest, metadata: storableMetadata(metadata), metadataJson: JSON.stringify(metadata ?? {}) };
    const contentId = `${sessionId}/${doc.version}/${doc.archivedAt}`;
    const before = await this.collection.findOne({ _id: sessionId }, { projection: { version: 1, archivedAt: 1, contentId: 1 } });
    // A retry of a save that landed (a worker killed after the write, a timeout after it) finds its own archive.
    if (before?.version === doc.version && before.archivedAt === doc.archivedAt) return { version: doc.version };
    // An archive written after this one was (a newer run's, or this run's own later save) is never replaced by it:
    // this is an attempt that lost its way (stalled, then run on after a retry landed and another run archived).
    if (typeof before?.archivedAt === 'string' && before.archivedAt >= doc.archivedAt) throw versionConflict(sessionId, before.version, baseVersion);
    let named = typeof before?.contentId === 'string' ? before.contentId : undefined;
    // Tried again while the archive it restored is still the stored one and only where its content lives changed
    // (the sweep moved inline content out, or dropped an expired archive's): that is no other run's save.
    for (let attempt = 1; ; attempt++) {
      const entry = pendingEntry(contentId);
      await this.collection.updateOne({ _id: sessionId }, { $addToSet: { pending: entry } } as never, { upsert: true });
      await this.writeContent(contentId, { sessionId, ...content });
      const filter = {
        _id: sessionId,
        version: baseVersion === 0 ? { $in: [0, null] } : baseVersion,
        contentId: named ?? { $exists: false },
        // Still listed: a sweep that judged the content abandoned and deleted it took the entry off first.
        pending: entry,
      };
      try {
        const res = await this.collection.updateOne(
          filter as never,
          { $set: { ...header, contentId }, $unset: unsetContent, $pull: { pending: entry }, ...(named ? { $addToSet: { purge: named } } : {}) } as never,
        );
        if (res.matchedCount === 1) break;
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
      }
      const current = await this.collection.findOne({ _id: sessionId }, { projection: { version: 1, archivedAt: 1, contentId: 1 } });
      if (current?.version === doc.version && current.archivedAt === doc.archivedAt) return { version: doc.version };
      const sameArchive = current?.version === before?.version && current?.archivedAt === before?.archivedAt;
      if (!sameArchive || attempt === 3) {
        await this.dropPending(sessionId, entry);
        throw versionConflict(sessionId, current?.version, baseVersion);
      }
      await this.collection.updateOne({ _id: sessionId }, { $pull: { pending: entry } } as never);
      named = typeof current?.contentId === 'string' ? current.contentId : undefined;
    }
    // Left in `purge` if this fails or the worker dies here: the sweep deletes it.
    if (named) await this.dropContent(sessionId, named, 'purge').catch(() => undefined);
    return { version: doc.version };
  }

  /**
   * Writes a content under its id, which is new for each save: inserted,
   * and replaced (upserted, in case a sweep took it meanwhile) only when a
   * retry finds it already written. An upsert first would be one call, but
   * FerretDB answers an upsert that matches nothing by reading the whole
   * collection (109 ms a save with 93 archives stored, docs/performance.md).
   */
  private async writeContent(contentId: string, content: Record<string, unknown>): Promise<void> {
    try {
      await this.contents.insertOne({ _id: contentId, ...content });
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
      await this.contents.replaceOne({ _id: contentId }, content, { upsert: true });
    }
  }

  /** Takes a content's entry off `pending` and, if this call did (no save named it meanwhile), deletes the content. */
  private async dropPending(sessionId: string, entry: string): Promise<boolean> {
    const contentId = contentOfEntry(entry);
    const res = await this.collection.updateOne({ _id: sessionId, pending: entry, contentId: { $ne: contentId } } as never, { $pull: { pending: entry } } as never);
    if (res.modifiedCount !== 1) return false;
    await this.contents.deleteOne({ _id: contentId });
    return true;
  }

  /** Deletes a content a header moved on from, then takes it off the header's `purge`. */
  private async dropContent(sessionId: string, contentId: string, list: 'purge'): Promise<number> {
    const res = await this.contents.deleteOne({ _id: contentId });
    await this.collection.updateOne({ _id: sessionId }, { $pull: { [list]: contentId } } as never);
    return res.deletedCount;
  }

  /**
   * The archived events from `fromOffset` on, for a reader the session's
   * owner, or an approver or admin of its tenant, is. Null when there is no
   * archive; `NotAuthorized` for anyone else (nothing of the session returned).
   */
  async readEvents(input: ReadArchivedEventsInput): Promise<ArchivedEventsPage | null> {
    const doc = await this.collection.findOne({ _id: input.sessionId }, { projection: { namespace: 1, status: 1, version: 1 } });
    if (!doc || doc.version === undefined) return null;
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
    // Read only once the reader may. Content inline in the header (from before the split) wins, as in `load`.
    const read = await this.read(input.sessionId, { namespace: 1, status: 1, version: 1, contentId: 1, events: 1, summary: 1 }, { events: 1 });
    if (!read) return null;
    const stored = read.header.events ?? read.content.events;
    const events = ArchivedEvents.safeParse(stored ?? { nextOffset: 0, items: [] });
    const kept = events.success ? events.data : { nextOffset: 0, items: [] };
    const earliestOffset = kept.items[0]?.offset ?? kept.nextOffset;
    const items = kept.items.filter((i) => i.offset >= input.fromOffset).slice(0, input.limit);
    return { status: read.header.status === 'expired' ? 'expired' : 'archived', owner: owner.data, earliestOffset, nextOffset: kept.nextOffset, items };
  }

  /**
   * Moves inline content (a header written before the split, or by a worker
   * from before it) to `session_contents`, up to `limit` headers: until then
   * each save's version check reads it whole on FerretDB. An expired
   * header's inline empties are dropped. Each move is conditional on the
   * header being as it was read, so a save or an expiry at the same moment
   * wins. Returns how many headers were moved.
   */
  async moveInlineContent(limit: number): Promise<number> {
    const inline = await this.collection.find({ window: { $exists: true } }, { projection: { _id: 1 } }).limit(limit).toArray();
    let moved = 0;
    for (const { _id } of inline) {
      const doc = await this.collection.findOne({ _id });
      if (!doc || doc.window === undefined) continue;
      const asRead = { _id, version: doc.version, archivedAt: doc.archivedAt, status: doc.status, contentId: doc.contentId ?? { $exists: false } };
      if (doc.status === 'expired') {
        const res = await this.collection.updateOne(asRead as never, { $unset: unsetContent });
        moved += res.modifiedCount;
        continue;
      }
      const content = contentFields(doc);
      const contentId = `${_id}/${String(doc.version)}/${String(doc.archivedAt)}`;
      const named = typeof doc.contentId === 'string' && doc.contentId !== contentId ? doc.contentId : undefined;
      const entry = pendingEntry(contentId);
      await this.collection.updateOne({ _id }, { $addToSet: { pending: entry } } as never);
      await this.writeContent(contentId, { sessionId: _id, ...content });
      const res = await this.collection.updateOne({ ...asRead, pending: entry } as never, {
        $set: { contentId },
        $unset: unsetContent,
        $pull: { pending: entry },
        ...(named ? { $addToSet: { purge: named } } : {}),
      } as never);
      if (res.modifiedCount === 1) {
        moved += 1;
        if (named) await this.dropContent(_id, named, 'purge');
      } else {
        await this.dropPending(_id, entry);
      }
    }
    return moved;
  }

  /**
   * Marks archives past their retention as expired, keeping the header as a
   * tombstone (it restores as an empty session), and deletes their content
   * along with what earlier saves left for the sweep.
   */
  async expire(now: Date, beforeMarking?: (sessionIds: string[]) => Promise<unknown>): Promise<{ expired: number }> {
    let due: Record<string, unknown> = { status: 'archived', expiresAt: { $lt: now.toISOString() } };
    if (beforeMarking) {
      // What else the sessions left (their stored tool results) goes first, a batch a sweep (a backlog is taken over
      // the next sweeps): a sweep that dies before the mark finds them again. That cleanup failing does not stop expiry.
      const ids = (await this.collection.find(due, { projection: { _id: 1 } }).limit(EXPIRED_PER_SWEEP).toArray()).map((d) => String(d._id));
      if (ids.length === 0) return { expired: 0 };
      await beforeMarking(ids).catch((err: unknown) => console.warn(`[archive] could not delete what ${ids.length} expiring sessions left: ${err instanceof Error ? err.message : String(err)}`));
      due = { ...due, _id: { $in: ids } };
    }
    const res = await this.collection.updateMany(due as never, { $set: { status: 'expired', expiredAt: now.toISOString() }, $unset: unsetContent });
    await this.collectContents(now);
    return { expired: res.modifiedCount };
  }

  /**
   * Deletes content no header needs: an expired archive's, what a save moved
   * on from (`purge`), and what a save wrote but never named (`pending` for
   * over an hour). Headers are small, so finding them reads little even
   * where the filter reads every one. Returns how many were deleted.
   */
  async collectContents(now: Date): Promise<number> {
    const headers = await this.collection
      .find(
        { $or: [{ 'purge.0': { $exists: true } }, { 'pending.0': { $exists: true } }, { status: 'expired', contentId: { $exists: true } }] },
        { projection: { purge: 1, pending: 1, contentId: 1, status: 1 } },
      )
      .toArray();
    let deleted = 0;
    for (const h of headers) {
      for (const id of stringList(h.purge)) deleted += await this.dropContent(h._id, id, 'purge');
      for (const entry of stringList(h.pending)) {
        // A save takes seconds; an entry without a readable time is not one a save could still name.
        if (now.getTime() - listedAt(entry) <= PENDING_CONTENT_GRACE_MS) continue;
        if (await this.dropPending(h._id, entry)) deleted += 1;
      }
      if (h.status === 'expired' && typeof h.contentId === 'string') {
        // Deleted first: an expired archive's content is never looked up, so a header left naming it is harmless.
        const res = await this.contents.deleteOne({ _id: h.contentId });
        await this.collection.updateOne({ _id: h._id, status: 'expired', contentId: h.contentId } as never, { $unset: { contentId: '' } });
        deleted += res.deletedCount;
      }
    }
    return deleted;
  }
}
