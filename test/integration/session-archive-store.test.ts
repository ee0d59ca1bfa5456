import { ArchivedSession, SESSION_CONTENTS_COLLECTION, SESSIONS_COLLECTION, SessionArchiveRepository } from '../../activities/session-archive';
import { SessionCounters } from '../../workflows/session-types';
import { createArchiveActivities } from '../../activities/archive-activities';
import { TOOL_RESULTS_COLLECTION, ToolResultStore } from '../../activities/tools/tool-result-store';
import { SessionSummary } from '../../workflows/session-summary';
import type { Db } from 'mongodb';
import { useMonitoredDb } from '../support/monitored-db';

/*
 * Archives on the real MongoDB-compatible server, header and content apart:
 * the version check of a save and the expiry sweep read every header of
 * the collection on FerretDB, so a header stays small however long the
 * session was; headers written with the content inline (before the split)
 * still load, and a save moves their content out.
 */

const m = useMonitoredDb('archives', ['insert', 'update']);
const repo = () => new SessionArchiveRepository(m.db);
const headers = () => m.db.collection<{ _id: string } & Record<string, unknown>>(SESSIONS_COLLECTION);
const contents = () => m.db.collection<{ _id: string; sessionId: string }>(SESSION_CONTENTS_COLLECTION);

/** An archive whose window holds `turns` turns of about 2 KB each. */
function archive(sessionId: string, version: number, turns: number, archivedAt = new Date(Date.UTC(2026, 0, 1, 0, 0, version)).toISOString()): ArchivedSession {
  const at = '2026-01-01T00:00:00.000Z';
  return ArchivedSession.parse({
    sessionId,
    namespace: { tenant: 't', user: 'u' },
    channel: 'test',
    metadata: {},
    createdAt: at,
    archivedAt,
    expiresAt: '2099-01-01T00:00:00.000Z',
    status: 'archived',
    version,
    turnSeq: turns,
    window: Array.from({ length: turns }, (_, i) => ({
      turnId: `turn-${i + 1}`,
      messages: [
        { role: 'user', content: `question ${i + 1} ${'q'.repeat(1_000)}` },
        { role: 'assistant', content: `answer ${i + 1} ${'a'.repeat(1_000)}` },
      ],
      outcome: 'completed',
      startedAt: at,
      endedAt: at,
    })),
    summary: SessionSummary.parse({ preferences: ['short answers'] }),
    keyFacts: [],
    toolCalls: [],
    counters: SessionCounters.parse({ turns, modelCalls: turns, toolCalls: 0, toolFailures: 0, interrupts: 0, confirmationsRequested: 0, continuedAsNew: 0, summariesFolded: 0, summaryFailures: 0 }),
    toolPins: [],
    events: { nextOffset: 2, items: [{ offset: 0, json: '{"type":"turn_started"}' }, { offset: 1, json: '{"type":"turn_completed"}' }] },
  });
}

const owner = { tenant: 't', user: 'u' };
/**
 * A database whose collection `name` runs `hook` once, before the first call
 * of `method` whose arguments `when` accepts: another writer acting at that
 * instant.
 */
function onCall(name: string, method: 'findOne' | 'replaceOne' | 'updateOne', hook: (args: unknown[]) => Promise<void>, when: (args: unknown[]) => boolean = () => true): Db {
  let done = false;
  return new Proxy(m.db, {
    get(db, prop) {
      if (prop !== 'collection') return Reflect.get(db, prop, db);
      return (collectionName: string) => {
        const collection = db.collection(collectionName);
        if (collectionName !== name) return collection;
        return new Proxy(collection, {
          get(c, p) {
            const real = Reflect.get(c, p, c) as unknown;
            if (p !== method || typeof real !== 'function') return real;
            return async (...args: unknown[]) => {
              if (!done && when(args)) {
                done = true;
                await hook(args);
              }
              return (real as (...a: unknown[]) => Promise<unknown>).apply(c, args);
            };
          },
        });
      };
    },
  });
}

const contentIdsOf = async (sessionId: string) => (await contents().find({ sessionId }).toArray()).map((d) => d._id);

it('keeps a small header in sessions and the content apart, one content per session, and loads them as one', async () => {
  const sessionId = 'split-1';
  const first = archive(sessionId, 1, 20);
  await repo().save({ archive: first, baseVersion: 0 });
  const header = await headers().findOne({ _id: sessionId });
  expect(header).not.toHaveProperty('window');
  expect(header).not.toHaveProperty('events');
  // Twenty turns of 2 KB: the content is over 40 KB, the header a few hundred bytes.
  expect(JSON.stringify(header).length).toBeLessThan(2_000);
  expect(await contentIdsOf(sessionId)).toEqual([header?.contentId]);
  expect(await repo().load(sessionId)).toEqual(first);

  // The next version replaces the content; the one before is deleted.
  const second = archive(sessionId, 2, 21);
  await repo().save({ archive: second, baseVersion: 1 });
  expect(await repo().load(sessionId)).toEqual(second);
  expect(await contentIdsOf(sessionId)).toEqual([(await headers().findOne({ _id: sessionId }))?.contentId]);
});

it('a save inserts its content, no upsert (FerretDB reads every content for one that matches nothing); a retry that finds it written replaces it', async () => {
  const sessionId = 'split-insert';
  const saved = archive(sessionId, 1, 2);
  // An attempt that wrote the content and died before naming it in the header left this behind.
  await contents().insertOne({ _id: `${sessionId}/1/${saved.archivedAt}`, sessionId, window: [] } as never);
  const from = m.commands.length;
  await expect(repo().save({ archive: saved, baseVersion: 0 })).resolves.toEqual({ version: 1 });
  expect(await repo().load(sessionId)).toEqual(saved);
  const writes = m.commands.slice(from).filter((c) => c.command[c.commandName] === SESSION_CONTENTS_COLLECTION);
  expect(writes.map((c) => c.commandName)).toEqual(['insert', 'update']);
  // The replace that follows the refused insert names the one content by id.
  expect((writes[1]?.command.updates as Array<{ q: unknown }>)[0]?.q).toEqual({ _id: `${sessionId}/1/${saved.archivedAt}` });

  const next = archive(sessionId, 2, 3);
  const before = m.commands.length;
  await repo().save({ archive: next, baseVersion: 1 });
  const upserts = m.commands.slice(before).filter((c) => c.command[c.commandName] === SESSION_CONTENTS_COLLECTION && c.commandName === 'update');
  expect(upserts).toEqual([]);
  expect(await repo().load(sessionId)).toEqual(next);
});

it('a save that loses the version check writes nothing and leaves no content behind; a retried save that landed returns its version', async () => {
  const sessionId = 'split-2';
  const winner = archive(sessionId, 2, 3);
  await repo().save({ archive: archive(sessionId, 1, 2), baseVersion: 0 });
  await repo().save({ archive: winner, baseVersion: 1 });
  await expect(repo().save({ archive: archive(sessionId, 2, 5, '2026-01-02T00:00:00.000Z'), baseVersion: 1 })).rejects.toMatchObject({ type: 'SessionVersionConflict' });
  await expect(repo().save({ archive: winner, baseVersion: 1 })).resolves.toEqual({ version: 2 });
  expect(await repo().load(sessionId)).toEqual(winner);
  expect(await contentIdsOf(sessionId)).toHaveLength(1);
});

it('loads a header written with its content inline, and a save moves the content out', async () => {
  const sessionId = 'split-legacy';
  const old = archive(sessionId, 1, 3);
  await headers().insertOne({ _id: sessionId, ...old });
  expect(await repo().load(sessionId)).toEqual(old);
  const page = await repo().readEvents({ sessionId, fromOffset: 1, limit: 10, principal: owner });
  expect(page?.items).toEqual([{ offset: 1, json: '{"type":"turn_completed"}' }]);

  const next = archive(sessionId, 2, 4);
  await repo().save({ archive: next, baseVersion: 1 });
  expect(await headers().findOne({ _id: sessionId })).not.toHaveProperty('window');
  expect(await repo().load(sessionId)).toEqual(next);
});

it('serves archived events from the content, to the owner only', async () => {
  const sessionId = 'split-events';
  await repo().save({ archive: archive(sessionId, 1, 1), baseVersion: 0 });
  const page = await repo().readEvents({ sessionId, fromOffset: 0, limit: 10, principal: owner });
  expect(page).toMatchObject({ status: 'archived', earliestOffset: 0, nextOffset: 2, items: [{ offset: 0 }, { offset: 1 }] });
  await expect(repo().readEvents({ sessionId, fromOffset: 0, limit: 10, principal: { tenant: 't', user: 'someone-else' } })).rejects.toMatchObject({ type: 'NotAuthorized' });
});

it('expiry purges the content and keeps the header as a tombstone that loads empty, legacy headers too', async () => {
  const current = { ...archive('split-expire', 1, 3), expiresAt: '2026-01-01T00:00:01.000Z' };
  const legacy = { ...archive('split-expire-legacy', 1, 3), expiresAt: '2026-01-01T00:00:01.000Z' };
  await repo().save({ archive: current, baseVersion: 0 });
  await headers().insertOne({ _id: legacy.sessionId, ...legacy });
  await expect(repo().expire(new Date('2026-06-01T00:00:00.000Z'))).resolves.toEqual({ expired: 2 });
  expect(await contentIdsOf(current.sessionId)).toEqual([]);
  for (const sessionId of [current.sessionId, legacy.sessionId]) {
    const tomb = await repo().load(sessionId);
    expect(tomb).toMatchObject({ status: 'expired', version: 1, window: [], keyFacts: [], toolCalls: [], events: { nextOffset: 0, items: [] } });
    expect(await headers().findOne({ _id: sessionId })).not.toHaveProperty('window');
    const page = await repo().readEvents({ sessionId, fromOffset: 0, limit: 10, principal: owner });
    expect(page).toMatchObject({ status: 'expired', items: [] });
  }
});

it('a header that names content no longer stored fails the load with what is missing and where', async () => {
  const sessionId = 'split-missing';
  await repo().save({ archive: archive(sessionId, 1, 1), baseVersion: 0 });
  await contents().deleteMany({ sessionId });
  await expect(repo().load(sessionId)).rejects.toMatchObject({
    type: 'ArchiveInvalid',
    message: expect.stringMatching(/split-missing names content split-missing\/1\/.* which is not in "session_contents"/),
  });
});

it('the maintenance sweep moves inline content out of headers written before the split, a batch at a time', async () => {
  const olds = ['split-move-1', 'split-move-2', 'split-move-3'].map((id) => archive(id, 1, 2));
  for (const old of olds) await headers().insertOne({ _id: old.sessionId, ...old });
  const moved = await repo().moveInlineContent(2);
  expect(moved).toBe(2);
  expect(await repo().moveInlineContent(10)).toBe(1);
  expect(await repo().moveInlineContent(10)).toBe(0);
  for (const old of olds) {
    expect(await headers().findOne({ _id: old.sessionId })).not.toHaveProperty('window');
    expect(await repo().load(old.sessionId)).toEqual(old);
  }
});

it('an attempt that runs on after a newer archive of the same version landed is refused and names nothing', async () => {
  const sessionId = 'split-late';
  await repo().save({ archive: archive(sessionId, 5, 1, '2026-01-01T00:00:01.000Z'), baseVersion: 0 });
  // A restored run that took no turn archives the version it restored; then another does the same.
  const first = archive(sessionId, 5, 2, '2026-01-01T00:00:02.000Z');
  const second = archive(sessionId, 5, 3, '2026-01-01T00:00:03.000Z');
  await repo().save({ archive: first, baseVersion: 5 });
  await repo().save({ archive: second, baseVersion: 5 });
  // The first run's stalled attempt goes on after both: the archive after its own stays.
  await expect(repo().save({ archive: first, baseVersion: 5 })).rejects.toMatchObject({ type: 'SessionVersionConflict' });
  expect(await repo().load(sessionId)).toEqual(second);
  expect(await contentIdsOf(sessionId)).toEqual([`${sessionId}/5/2026-01-01T00:00:03.000Z`]);
});

it('a load that meets a save between its two reads reads the new archive, not a missing one', async () => {
  const sessionId = 'split-race';
  await repo().save({ archive: archive(sessionId, 1, 1), baseVersion: 0 });
  const next = archive(sessionId, 2, 2);
  // The save lands, deleting the content the header named, just before the load reads that content.
  let raced = false;
  const racing = onCall(SESSION_CONTENTS_COLLECTION, 'findOne', async () => {
    raced = true;
    await repo().save({ archive: next, baseVersion: 1 });
  });
  expect(await new SessionArchiveRepository(racing).load(sessionId)).toEqual(next);
  expect(raced).toBe(true);
});

it('content a worker from before the split wrote inline over a named one wins, and moving it out deletes the named one', async () => {
  const sessionId = 'split-mixed';
  await repo().save({ archive: archive(sessionId, 1, 1), baseVersion: 0 });
  const named = (await headers().findOne({ _id: sessionId }))?.contentId;
  // What such a worker's save does: the whole archive set inline, `contentId` left as it was.
  const newer = archive(sessionId, 2, 4);
  await headers().updateOne({ _id: sessionId }, { $set: { ...newer } });
  expect(await repo().load(sessionId)).toEqual(newer);
  expect(await repo().moveInlineContent(10)).toBeGreaterThanOrEqual(1);
  expect(await repo().load(sessionId)).toEqual(newer);
  expect(await contentIdsOf(sessionId)).toEqual([`${sessionId}/2/${newer.archivedAt}`]);
  expect(await contents().findOne({ _id: named as string })).toBeNull();
});

it('the sweep deletes content saves left behind: moved on from, never named after an hour, or of an expired archive', async () => {
  const sessionId = 'split-sweep';
  const current = archive(sessionId, 3, 1);
  await repo().save({ archive: current, baseVersion: 0 });
  const body = { sessionId, window: [] };
  const stale = `${sessionId}/2/2026-01-01T00:00:02.000Z`;
  const abandoned = `${sessionId}/4/2026-06-01T00:00:00.000Z`;
  const inFlight = `${sessionId}/4/2026-06-01T01:30:00.000Z`;
  for (const id of [stale, abandoned, inFlight]) await contents().insertOne({ _id: id, ...body });
  // A worker died after naming the new content (the old one still to delete), and two saves died before naming theirs.
  // Pending entries carry the time their writer listed them.
  const inFlightEntry = `2026-06-01T01:30:00.000Z ${inFlight}`;
  await headers().updateOne({ _id: sessionId }, { $set: { purge: [stale], pending: [`2026-06-01T00:00:00.000Z ${abandoned}`, inFlightEntry] } });
  expect(await repo().collectContents(new Date('2026-06-01T02:00:00.000Z'))).toBe(2);
  expect((await contentIdsOf(sessionId)).sort()).toEqual([`${sessionId}/3/${current.archivedAt}`, inFlight].sort());
  expect(await headers().findOne({ _id: sessionId })).toMatchObject({ purge: [], pending: [inFlightEntry] });
  expect(await repo().load(sessionId)).toEqual(current);

  // An expiry that died after marking the archive expired, before deleting its content.
  await headers().updateOne({ _id: sessionId }, { $set: { status: 'expired' } });
  expect(await repo().collectContents(new Date('2026-06-01T02:00:00.000Z'))).toBe(1);
  expect(await contentIdsOf(sessionId)).toEqual([inFlight]);
  expect(await headers().findOne({ _id: sessionId })).not.toHaveProperty('contentId');
  expect(await repo().load(sessionId)).toMatchObject({ status: 'expired', window: [] });
});

it('an expired header from before the split loses its inline empties and gains no content', async () => {
  const sessionId = 'split-old-tomb';
  const tomb = { ...archive(sessionId, 1, 0), status: 'expired' as const, window: [] };
  await headers().insertOne({ _id: sessionId, ...tomb });
  expect(await repo().moveInlineContent(50)).toBeGreaterThanOrEqual(1);
  expect(await headers().findOne({ _id: sessionId })).not.toHaveProperty('window');
  expect(await contentIdsOf(sessionId)).toEqual([]);
  expect(await repo().load(sessionId)).toMatchObject({ status: 'expired', version: 1, window: [] });
});

it('a save that meets the sweep moving its archive\'s inline content out still lands: same archive, only where its content lives changed', async () => {
  const sessionId = 'split-save-vs-move';
  const old = archive(sessionId, 1, 2);
  await headers().insertOne({ _id: sessionId, ...old });
  const next = archive(sessionId, 2, 3);
  const racing = onCall(SESSION_CONTENTS_COLLECTION, 'replaceOne', async () => {
    expect(await repo().moveInlineContent(50)).toBeGreaterThanOrEqual(1);
  });
  await expect(new SessionArchiveRepository(racing).save({ archive: next, baseVersion: 1 })).resolves.toEqual({ version: 2 });
  expect(await repo().load(sessionId)).toEqual(next);
  expect(await contentIdsOf(sessionId)).toEqual([`${sessionId}/2/${next.archivedAt}`]);
});

it('a save whose content a sweep judged abandoned and deleted writes it again before naming it', async () => {
  const sessionId = 'split-save-vs-sweep';
  await repo().save({ archive: archive(sessionId, 1, 1), baseVersion: 0 });
  const next = archive(sessionId, 2, 2);
  const contentId = `${sessionId}/2/${next.archivedAt}`;
  // What a sweep does to an entry it finds over an hour old, right after the save wrote its content.
  let swept = false;
  const racing = onCall(
    SESSIONS_COLLECTION,
    'updateOne',
    async ([filter]) => {
      swept = true;
      await headers().updateOne({ _id: sessionId }, { $pull: { pending: (filter as { pending: string }).pending } } as never);
      await contents().deleteOne({ _id: contentId });
    },
    // The header write that names the content: the one whose filter holds the save's pending entry.
    ([filter]) => typeof (filter as { pending?: unknown }).pending === 'string',
  );
  await expect(new SessionArchiveRepository(racing).save({ archive: next, baseVersion: 1 })).resolves.toEqual({ version: 2 });
  expect(swept).toBe(true);
  expect(await repo().load(sessionId)).toEqual(next);
  expect(await headers().findOne({ _id: sessionId })).toMatchObject({ pending: [], purge: [] });
});

it('metadata whose keys MongoDB-compatible servers refuse ("." inside, "$" first) is saved as text and loads as it was; metadata stored as an object still loads', async () => {
  const sessionId = 'metadata-keys';
  const first = { ...archive(sessionId, 1, 2), metadata: { 'app.version': '1.2', $source: 'import', plain: 'yes' } };
  // Before, FerretDB refused the header's write ("key must not contain '.'"), and the close was tried every minute for ever.
  await repo().save({ archive: first, baseVersion: 0 });
  expect(await repo().load(sessionId)).toEqual(first);
  // A worker of the version before reads `metadata` (and requires it): the keys it can store are there.
  expect(await headers().findOne({ _id: sessionId })).toMatchObject({ metadata: { plain: 'yes' } });

  const legacy = 'metadata-object';
  const old = { ...archive(legacy, 1, 1), metadata: { team: 'blue' } };
  await repo().save({ archive: old, baseVersion: 0 });
  // As a worker from before wrote it: the metadata as an object.
  await headers().updateOne({ _id: legacy } as never, { $set: { metadata: { team: 'blue' } }, $unset: { metadataJson: '' } });
  expect(await repo().load(legacy)).toEqual(old);
  // A worker from before saved over a header of this version: its `metadata` wins over the text it left alone.
  await repo().save({ archive: { ...old, version: 2, archivedAt: '2026-01-01T00:00:09.000Z' }, baseVersion: 1 });
  await headers().updateOne({ _id: legacy } as never, { $set: { metadata: { team: 'red' } } });
  expect((await repo().load(legacy))?.metadata).toEqual({ team: 'red' });
});

it('the expiry sweep deletes the stored tool results of the sessions it expires, and only theirs', async () => {
  const store = new ToolResultStore(m.db);
  const gone = 'results-gone.a:b';
  const kept = 'results-kept';
  await repo().save({ archive: { ...archive(gone, 1, 1), expiresAt: '2026-02-01T00:00:00.000Z' }, baseVersion: 0 });
  await repo().save({ archive: archive(kept, 1, 1), baseVersion: 0 });
  await store.save(`${gone}:turn-1:1:call_0`, 'read', 'x'.repeat(1_000), gone);
  // Stored by a worker from before results named their session: found by the key's prefix.
  await store.save(`${gone}:turn-2:1:call_0`, 'read', 'y'.repeat(1_000));
  await store.save(`${kept}:turn-1:1:call_0`, 'read', 'z'.repeat(1_000), kept);
  // Sessions whose ids only start like the expired one's keep their results (ids may hold ":").
  await store.save(`${gone}x:turn-1:1:call_0`, 'read', 'w'.repeat(1_000));
  await store.save(`${gone}:ticket-7:turn-1:1:call_0`, 'read', 'v'.repeat(1_000));
  const swept = await createArchiveActivities(repo(), undefined, store).expireArchives({ now: '2026-06-01T00:00:00.000Z' });
  expect(swept).toMatchObject({ expired: 1, toolResults: 2 });
  const left = (await m.db.collection(TOOL_RESULTS_COLLECTION).find({}, { projection: { _id: 1 } }).toArray()).map((d) => String(d._id)).filter((id) => id.startsWith('results-')).sort();
  expect(left).toEqual([`${gone}x:turn-1:1:call_0`, `${gone}:ticket-7:turn-1:1:call_0`, `${kept}:turn-1:1:call_0`].sort());
});
