import type { SearchAttributeUpdatePair } from '@temporalio/common';
import { ActivityFailure, ApplicationFailure, TemporalFailure, isCancellation, log, proxyActivities, proxyLocalActivities, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import type { SessionActivities } from '../activities/activity-types';
import type { ArchivedSession } from '../activities/session-archive';
import { fitArchive, fitCarriedState } from './carried-state-budget';
import { FailureType } from './failure-types';
import { SessionPendingApprovalsKey, SessionStatusKey, SessionTenantKey, SessionUserKey } from './search-attributes';
import { SessionContext } from './session-context';
import { PENDING_APPROVALS_ATTRIBUTE, type SessionRun } from './session-run';
import { DEDUPE_MEMORY, STREAM_BYTES_KEPT, type CarriedState } from './session-state';
import { emptyCounters } from './session-types';
import { ToolPins } from './tool-pins';
import { count, observe } from './metrics';
import { isoAt, nowMs } from './workflow-clock';
import { inBaseline, isPatched } from './patches';

const { loadArchive } = proxyActivities<SessionActivities>({
  startToCloseTimeout: '2 minutes',
  retry: { maximumAttempts: 3, initialInterval: '1 second', nonRetryableErrorTypes: [FailureType.ModelRequestInvalid, FailureType.ModelAuthFailed] },
});
/**
 * The archive written when the session closes is tried until it lands: a
 * failure that left the workflow would fail the run and lose everything it
 * held since its last archive. A MongoDB outage delays the close (messages
 * meanwhile are refused as the session closing, and the Web UI shows the
 * pending activity with its last failure); an archive the worker refuses
 * (a bug) waits for a fixed worker, its input kept in history. Only another
 * run's archive (a version conflict) ends the attempts.
 */
const { saveArchive } = proxyActivities<SessionActivities>({
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '500 milliseconds', backoffCoefficient: 2, maximumInterval: '1 minute', nonRetryableErrorTypes: [FailureType.SessionVersionConflict] },
});
const { describeSearchAttributes } = proxyLocalActivities<SessionActivities>({
  startToCloseTimeout: '10 seconds',
  retry: { maximumAttempts: 3, initialInterval: '200 milliseconds' },
});
/** The same read as `loadArchive`, run by the worker inside the workflow task that needs it. */
const { loadArchive: loadArchiveLocally } = proxyLocalActivities<SessionActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { maximumAttempts: 3, initialInterval: '1 second' },
});

/**
 * Patch id: a fresh run reads its archive in a local activity, within its
 * first workflow task, not as an activity the server schedules: every new
 * session and every run restored from an archive then starts one workflow
 * task and one server round trip sooner. The read is a single lookup by id
 * with no side effect, so running it again when a workflow task is retried
 * costs nothing. Runs that started before it keep their scheduled activity.
 */
export const ARCHIVE_LOADED_LOCALLY = inBaseline('archive-loaded-locally');

/**
 * Patch id: a restored session takes its tool pins from the archive, so a
 * tool that changed while it was archived waits for approval again. Runs
 * that restored before it ignore pins in the archive they read.
 */
export const TOOL_PINS_IN_ARCHIVE = inBaseline('tool-pins-in-archive');

/**
 * Patch id: the archive keeps the session's last events (served to readers
 * after the run has closed), and a restored run continues their offsets.
 */
export const EVENTS_IN_ARCHIVE = inBaseline('events-in-archive');
/** Patch id: the `archived` status event is emitted before the archive is written, so the archive (and its readers) have it. */
export const ARCHIVED_STATUS_IN_ARCHIVE = inBaseline('archived-status-in-archive');

/** JSON bytes of events the archive keeps (the newest ones). */
export const ARCHIVED_EVENT_BYTES = 128_000;

/** Patch id: the session sets its own search attributes when the starter did not. */
export const SESSION_SETS_SEARCH_ATTRIBUTES = inBaseline('session-sets-search-attributes');

/**
 * Patch id: when reading which search attributes the namespace registered
 * fails (a cluster refusing the operator call), the session runs without
 * setting its own instead of failing its run. Asked only once the read has
 * failed.
 */
export const SEARCH_ATTRIBUTES_READ_OPTIONAL = 'search-attributes-read-optional';

/**
 * Sessions started by another client (another SDK, the CLI) may come
 * without search attributes, and would be invisible to the UI's filters.
 * The session sets those it lacks, when the namespace has them registered
 * (setting an unregistered one would fail the workflow task).
 */
export async function ensureSearchAttributes(run: SessionRun): Promise<void> {
  const current = workflowInfo().typedSearchAttributes;
  const wanted = [
    { key: SessionUserKey, value: run.options.namespace.user },
    { key: SessionTenantKey, value: run.options.namespace.tenant },
    { key: SessionStatusKey, value: run.status },
  ];
  const missing: SearchAttributeUpdatePair[] = wanted.filter((w) => current.get(w.key) === undefined);
  const pendingMissing = current.get(SessionPendingApprovalsKey) === undefined;
  if ((missing.length === 0 && !pendingMissing) || run.carried !== undefined || !isPatched(SESSION_SETS_SEARCH_ATTRIBUTES)) return;
  if (pendingMissing && isPatched(PENDING_APPROVALS_ATTRIBUTE)) missing.push({ key: SessionPendingApprovalsKey, value: 0 });
  if (missing.length === 0) return;
  let names: string[];
  try {
    names = await describeSearchAttributes({ names: missing.map((m) => m.key.name) });
  } catch (err) {
    // A cluster may refuse the operator call, or be out of reach for a moment: the session runs without
    // setting its own attributes rather than failing its run.
    if (isCancellation(err) || !(err instanceof TemporalFailure) || !isPatched(SEARCH_ATTRIBUTES_READ_OPTIONAL)) throw err;
    log.warn('could not read which search attributes the namespace has registered; the session runs without setting its own', { error: err.message });
    return;
  }
  const registered = new Set(names);
  const settable = missing.filter((m) => registered.has(m.key.name));
  if (settable.length === 0) return;
  upsertSearchAttributes(settable);
  run.canUpsertStatus ||= settable.some((m) => m.key.name === SessionStatusKey.name);
  run.canUpsertPending ||= settable.some((m) => m.key.name === SessionPendingApprovalsKey.name);
}

/** A fresh run reads the session's archive, if it has one, and continues from it. */
export async function restoreFromArchive(run: SessionRun): Promise<void> {
  if (run.restored) return;
  const loadStarted = nowMs();
  const archive = isPatched(ARCHIVE_LOADED_LOCALLY)
    ? await loadArchiveLocally.executeWithOptions({ summary: 'load archive' }, [{ sessionId: run.sessionId }])
    : await loadArchive.executeWithOptions({ startToCloseTimeout: '30 seconds', summary: 'load archive' }, [{ sessionId: run.sessionId }]);
  if (archive && archive.status === 'archived') {
    count('restores');
    observe('restoreSeconds', (nowMs() - loadStarted) / 1000);
    run.createdAt = archive.createdAt;
    run.version = archive.version;
    run.baseVersion = archive.version;
    run.turnSeq = archive.turnSeq;
    run.counters = { ...emptyCounters(), ...archive.counters };
    run.context = new SessionContext({ window: archive.window, unfolded: [], summary: archive.summary, keyFacts: archive.keyFacts }, run.windowLimits);
    run.toolRecords = archive.toolCalls;
    // Archives from before pins were kept have none: the session pins what it sees next, as a new one would.
    if (archive.toolPins && archive.toolPins.length > 0 && isPatched(TOOL_PINS_IN_ARCHIVE)) run.toolHashes.replaceWith(ToolPins.fromArchive(archive.toolPins));
    if (archive.events && isPatched(EVENTS_IN_ARCHIVE)) run.events.continueFrom(archive.events.nextOffset);
    // Read, not yet taken: a message under one of these ids is asked about the patch when it comes (session-handlers.ts).
    for (const { id, turnId, version } of archive.messageIds ?? []) run.archivedMessageIds.set(id, { turnId, version });
    run.status = 'archived';
    // The owner is the one the session was created by, whatever options this run was started with.
    run.bindToOwner(archive.namespace);
  } else if (archive && archive.status === 'expired' && isPatched(EXPIRED_ARCHIVE_NUMBERING_KEPT)) {
    // Past its retention: the content is gone and the session starts empty, but it is the same session. Its
    // numbering goes on from the stored header, which the next archive must match (from 0 it matched
    // nothing, and every later close was refused, losing the run), and turn ids, and with them the
    // idempotency keys of tool calls, are not handed out a second time. The owner stays the one who created it.
    run.version = archive.version;
    run.baseVersion = archive.version;
    run.turnSeq = archive.turnSeq;
    run.bindToOwner(archive.namespace);
  }
  run.restored = true;
}

/**
 * Patch id: a run that finds its session's archive expired continues its
 * version, turn count and owner (it took none, and could never archive
 * again). Consulted only when the archive read is an expired one.
 */
export const EXPIRED_ARCHIVE_NUMBERING_KEPT = 'expired-archive-numbering-kept';

/**
 * Patch id: an end request a run received before it continued as new is
 * carried to the next run, which then closes (it was dropped, and the
 * session lived until its idle timeout). Consulted only when one was.
 */
export const END_REQUEST_CARRIED = inBaseline('end-request-carried');

function archivedIdsToCarry(run: SessionRun): Pick<CarriedState, 'archivedMessageIds'> {
  const ids = [...run.archivedMessageIds.entries()].filter(([id]) => !run.processed.has(id)).slice(-DEDUPE_MEMORY);
  return ids.length > 0 ? { archivedMessageIds: ids.map(([id, r]) => [id, { turnId: r.turnId, version: r.version }]) } : {};
}

/** The compact state the next run starts from: recent events only, and within one payload's budget. */
export function snapshot(run: SessionRun): CarriedState {
  const { events } = run;
  const state = events.stream.getState();
  let bytes = 0;
  let keepFrom = state.log.length;
  while (keepFrom > 0 && bytes + (state.log[keepFrom - 1]?.data.length ?? 0) <= STREAM_BYTES_KEPT) bytes += state.log[--keepFrom]?.data.length ?? 0;
  if (keepFrom > 0) events.stream.truncate(state.base_offset + keepFrom);
  const fitted = fitCarriedState({
    status: run.status,
    createdAt: run.createdAt,
    version: run.version,
    baseVersion: run.baseVersion,
    turnSeq: run.turnSeq,
    context: run.context.toState(),
    counters: run.counters,
    queue: run.queue,
    processed: [...run.processed.entries()],
    recentResults: run.recentResults,
    toolRecords: run.toolRecords,
    toolHashes: run.toolHashes.hashEntries(),
    toolPinTexts: run.toolHashes.textEntries(),
    pendingExtraction: run.pendingExtraction,
    ...(run.lastExtractedTurn ? { lastExtractedTurn: run.lastExtractedTurn } : {}),
    stream: events.stream.getState(),
    owner: run.owner,
    ...(run.foldBackoff.failures > 0 ? { foldBackoff: run.foldBackoff } : {}),
    // Asked to end during its last turn or while it waited to continue as new: the next run must still end.
    ...(run.endRequested && isPatched(END_REQUEST_CARRIED) ? { endRequested: true } : {}),
    // Read from the archive once, by the run that restored it: dropped here, a retry after this continue-as-new was a
    // new turn (its tools run again), and the next archive lost the ids for good.
    ...archivedIdsToCarry(run),
  });
  if (fitted.dropped.length > 0) log.warn(`Carried state over the payload budget; left out ${fitted.dropped.join(', ')}`);
  return fitted.state;
}

/**
 * Writes the session to MongoDB as one document, conditional on the archive
 * version this chain of runs restored from. Another run having written it
 * first (a concurrent restore) is reported, not thrown.
 */
export async function archiveSession(run: SessionRun): Promise<{ archiveConflict?: string }> {
  const { options, context } = run;
  const archivedAt = nowMs();
  const archive: ArchivedSession = {
    sessionId: run.sessionId,
    // The owner, not whoever's options started this run: a restore keeps it.
    namespace: { ...options.namespace, tenant: run.owner.tenant, user: run.owner.user },
    channel: options.channel,
    metadata: options.metadata,
    createdAt: run.createdAt,
    archivedAt: new Date(archivedAt).toISOString(),
    expiresAt: isoAt(archivedAt + options.limits.retentionMs),
    status: 'archived',
    version: run.version,
    turnSeq: run.turnSeq,
    window: [...context.unfolded, ...context.window],
    summary: context.summary,
    keyFacts: [...context.keyFacts],
    toolCalls: run.toolRecords,
    counters: run.counters,
    toolPins: run.toolHashes.toArchive(),
    ...(isPatched(EVENTS_IN_ARCHIVE) ? { events: run.events.forArchive(ARCHIVED_EVENT_BYTES) } : {}),
    // This run's ids and those it restored (a retry answered from them too): the last 200, so a later retry still finds them.
    messageIds: [
      ...[...run.archivedMessageIds.entries()].filter(([id]) => !run.processed.has(id)).map(([id, r]) => ({ id, turnId: r.turnId, version: r.version })),
      ...[...run.processed.entries()].map(([id, r]) => ({ id, turnId: r.turnId, version: r.version })),
    ].slice(-200),
  };
  // A session of very long turns: the write must fit in one payload, or the server fails the run and the session is lost.
  const fitted = fitArchive(archive);
  if (fitted.dropped.length > 0) log.warn(`Archive over the payload limit; left out ${fitted.dropped.join(', ')}`);
  try {
    await saveArchive.executeWithOptions({ startToCloseTimeout: '30 seconds', summary: 'archive session' }, [{ archive: fitted.archive, baseVersion: run.baseVersion }]);
    count('archives', { result: 'ok' });
    observe('archiveSeconds', (nowMs() - archivedAt) / 1000);
    return {};
  } catch (err) {
    if (!(err instanceof ActivityFailure && err.cause instanceof ApplicationFailure && err.cause.type === FailureType.SessionVersionConflict)) throw err;
    count('archives', { result: 'conflict' });
    run.events.emit({ type: 'error', errorType: FailureType.SessionVersionConflict, message: err.cause.message });
    return { archiveConflict: err.cause.message };
  }
}
