import { collectEvents, eventually, sessionOptions, startTestEnv, uniqueId, type TestEnv } from '../support/test-env';
import { failedFold, foldBackoffScript, isSummaryRequest, longMessage, scriptedSummary, UNFOLDED_CAP_LIMITS, unfoldedCapScript } from '../support/scripted-summarizer';
import { SESSIONS_COLLECTION, SessionArchiveRepository } from '../../activities/session-archive';
import { ensureMaintenanceSchedule } from '../../workers/maintenance-schedule';
import { workflowIdFor } from '../../workflows/messages';
import { SUMMARIZER_MARKER } from '../../activities/summarize-activity';
import type { ChatRequest } from '../../scripted-model';
import type { agentSession } from '../../workflows/agent-session';

let env: TestEnv;
beforeAll(async () => {
  env = await startTestEnv({ name: 'context' });
});
afterAll(async () => {
  await env?.close();
});

const systemOf = (req: ChatRequest) => String(req.messages[0]?.content ?? '');
const contents = (req: ChatRequest) => req.messages.map((m) => String(m.content ?? ''));

/** The session's view once `folds` summary folds have succeeded. */
function afterFolds(sessionId: string, folds: number, what: string) {
  return eventually(async () => {
    const v = await env.agent.getSession(sessionId);
    return v.counters.summariesFolded === folds ? v : null;
  }, what);
}

async function say(sessionId: string, options: Parameters<TestEnv['agent']['send']>[0], text: string) {
  const { turnId } = await env.agent.send(options, { text });
  return env.agent.waitForTurn(sessionId, turnId);
}

describe('context that does not forget', () => {
  it('still knows the third option after the list has left the window', async () => {
    const sessionId = uniqueId('s');
    const options = sessionOptions(sessionId, { limits: { windowMaxTurns: 2, foldBatchTurns: 1 } });
    env.model.script(
      [
        { respond: { kind: 'text', text: 'Here are three hotels in Lyon:\n1. Hotel Azur\n2. Le Parc\n3. Maison Rouge' } },
        { respond: { kind: 'text', text: 'Noted.' } },
        { respond: { kind: 'text', text: 'Sunny, 21 degrees.' } },
        { match: { systemIncludes: SUMMARIZER_MARKER }, respond: scriptedSummary },
        {
          match: { lastUserMessage: 'What was the third option you gave me?', where: (req) => systemOf(req).includes('3. Maison Rouge') },
          respond: { kind: 'text', text: 'The third option was Maison Rouge.' },
        },
        { match: { systemIncludes: SUMMARIZER_MARKER }, respond: scriptedSummary },
      ],
      { lane: sessionId },
    );
    await say(sessionId, options, 'Suggest hotels in Lyon');
    await say(sessionId, options, 'ok');
    await say(sessionId, options, 'And the weather there?');
    const answer = await say(sessionId, options, 'What was the third option you gave me?');
    expect(answer.text).toBe('The third option was Maison Rouge.');
    // Turn 4 pushes turn 2 out too; that fold runs after the turn completes, so its request comes after the answer's.
    const view = await afterFolds(sessionId, 2, 'the second fold');
    const last = env.model
      .requestsFor(sessionId)
      .map((r) => r.body as ChatRequest)
      .filter((r) => !isSummaryRequest(r))
      .at(-1)!;
    // The list is no longer in the raw turns, only in the summary region.
    expect(contents(last).slice(1).some((c) => c.includes('Maison Rouge'))).toBe(false);
    expect(systemOf(last)).toMatch(/## Summary of the earlier conversation[\s\S]*1\. Hotel Azur\n {2}2\. Le Parc\n {2}3\. Maison Rouge/);
    expect(view.window.map((t) => t.turnId)).toEqual(['turn-3', 'turn-4']);
    env.model.assertDone(sessionId);
  });

  it('keeps raw turns when summarization fails, says so, and folds them at the next turn', async () => {
    const sessionId = uniqueId('s');
    const options = sessionOptions(sessionId, { limits: { windowMaxTurns: 1, foldBatchTurns: 1 } });
    env.model.script(
      [
        { respond: { kind: 'text', text: 'Option list: 1. red 2. blue' } },
        { respond: { kind: 'text', text: 'second answer' } },
        failedFold,
        { match: { lastUserMessage: 'third' }, respond: { kind: 'text', text: 'third answer' } },
        { match: { systemIncludes: SUMMARIZER_MARKER }, respond: scriptedSummary },
      ],
      { lane: sessionId },
    );
    await say(sessionId, options, 'first');
    const second = await env.agent.send(options, { text: 'second' });
    const events = await collectEvents(env.agent, sessionId, (e) => e.type === 'error' && e.errorType === 'SummaryFailed', { timeoutMs: 30_000 });
    expect(events.at(-1)?.event).toMatchObject({ type: 'error', errorType: 'SummaryFailed' });
    await env.agent.waitForTurn(sessionId, second.turnId);
    const third = await say(sessionId, options, 'third');
    expect(third.outcome).toBe('completed');
    // The failed fold dropped nothing: turn 1 went to the model verbatim.
    const thirdRequest = env.model.requestsFor(sessionId).find((r) => !isSummaryRequest(r.body as ChatRequest) && contents(r.body as ChatRequest).includes('third'))!;
    expect(contents(thirdRequest.body as ChatRequest)).toEqual(expect.arrayContaining(['first', 'Option list: 1. red 2. blue', 'second']));
    await eventually(async () => (await env.agent.getSession(sessionId)).unfoldedTurns === 0, 'the retried fold');
    const view = await env.agent.getSession(sessionId);
    expect(view.counters).toMatchObject({ summaryFailures: 1, summariesFolded: 1 });
    env.model.assertDone(sessionId);
  });

  it('tries a summarizer that keeps failing less often, so turns do not wait for it every time', async () => {
    const sessionId = uniqueId('s');
    const options = sessionOptions(sessionId, { limits: { windowMaxTurns: 1, foldBatchTurns: 1 } });
    // The lane's requests in order: no summarizer request between 'four' and 'five' (the fold after turn 4 waits).
    env.model.script(foldBackoffScript(), { lane: sessionId });
    for (const text of ['one', 'two', 'three', 'four', 'five']) expect((await say(sessionId, options, text)).outcome).toBe('completed');
    const view = await afterFolds(sessionId, 1, 'the fold after turn 5');
    expect(view.counters).toMatchObject({ summaryFailures: 2, summariesFolded: 1 });
    expect(view.unfoldedTurns).toBe(0);
    env.model.assertDone(sessionId);
    const events = await collectEvents(env.agent, sessionId, (e) => e.type === 'turn_completed' && e.turnId === 'turn-5', { timeoutMs: 10_000 });
    const failed = events.filter((e) => e.event.type === 'error' && e.event.errorType === 'SummaryFailed').map((e) => (e.event as { message: string }).message);
    expect(failed).toEqual([expect.stringMatching(/retried after the next turn\.$/), expect.stringMatching(/retried after 2 more turns \(2 failures in a row\)\.$/)]);
  });

  it('turns a summarizer that keeps failing cannot fold stop growing the prompt: past the window budget they become summary notes', async () => {
    const sessionId = uniqueId('s');
    const options = sessionOptions(sessionId, { limits: UNFOLDED_CAP_LIMITS });
    // After turn 4 the fold waits (backoff): turns 1 and 2 are notes by then, 3 and 4 still whole.
    env.model.script(unfoldedCapScript(), { lane: sessionId });
    for (let n = 1; n <= 5; n++) expect((await say(sessionId, options, longMessage(n))).outcome).toBe('completed');
    const fifth = env.model.requestsFor(sessionId).map((r) => r.body as ChatRequest).find((req) => contents(req).includes(longMessage(5)))!;
    expect(contents(fifth).slice(1)).toEqual([longMessage(3), 'answer 3', longMessage(4), 'answer 4', longMessage(5)]);
    expect(systemOf(fifth)).toContain('### Other notes\n- Turn turn-1 (');
    expect(systemOf(fifth)).toMatch(/- Turn turn-2 \(\d{4}-\d\d-\d\d, not summarized\): the user said "message 2: 2{100,}…"; the answer began "answer 2"\./);
    expect(systemOf(fifth)).not.toContain(longMessage(1));
    const view = await afterFolds(sessionId, 1, 'the fold after turn 5');
    expect(view.counters).toMatchObject({ summaryFailures: 2, summariesFolded: 1, turnsCompacted: 2 });
    expect(view.unfoldedTurns).toBe(0);
    env.model.assertDone(sessionId);
    // The fold after turn 5 read the notes with the rest of the summary.
    const fold = env.model.requestsFor(sessionId).map((r) => r.body as ChatRequest).filter(isSummaryRequest).at(-1)!;
    expect(JSON.stringify(fold.messages)).toContain('Turn turn-2 (');
    const events = await collectEvents(env.agent, sessionId, (e) => e.type === 'turn_completed' && e.turnId === 'turn-5', { timeoutMs: 10_000 });
    const compacted = events.filter((e) => e.event.type === 'error' && e.event.errorType === 'TurnsCompacted');
    expect(compacted).toHaveLength(2);
    expect((compacted[0]?.event as { message: string }).message).toMatch(/^1 turn\(s\) waiting for a summary fold went past the window's token budget/);
  });

  it('accepts a summary the model made one note too long, keeping the newest notes, instead of failing the fold', async () => {
    const sessionId = uniqueId('s');
    const options = sessionOptions(sessionId, { limits: { windowMaxTurns: 1, foldBatchTurns: 1 } });
    const notes = Array.from({ length: 21 }, (_, i) => `note ${i + 1}`);
    env.model.script(
      [
        { respond: { kind: 'text', text: 'one answered' } },
        { respond: { kind: 'text', text: 'two answered' } },
        { match: { systemIncludes: SUMMARIZER_MARKER }, respond: { kind: 'json', value: { notes } } },
      ],
      { lane: sessionId },
    );
    await say(sessionId, options, 'one');
    await say(sessionId, options, 'two');
    const view = await afterFolds(sessionId, 1, 'the fold after turn 2');
    expect(view.counters.summaryFailures).toBe(0);
    expect(view.summary.notes).toEqual(notes.slice(1));
    // The summarizer is told the limits.
    const fold = env.model.requestsFor(sessionId).map((r) => r.body as ChatRequest).find(isSummaryRequest)!;
    expect(systemOf(fold)).toContain('20 notes');
    env.model.assertDone(sessionId);
  });

  it('reads a fold backoff carried into a run as untrusted: junk counts as no failures', async () => {
    const sessionId = uniqueId('s');
    const options = sessionOptions(sessionId, { limits: { windowMaxTurns: 1, foldBatchTurns: 1 } });
    env.model.script(
      [
        { respond: { kind: 'text', text: 'one answered' } },
        { respond: { kind: 'text', text: 'two answered' } },
        failedFold,
      ],
      { lane: sessionId },
    );
    // As any client may: a run started directly, with a carried state no continue-as-new wrote.
    await env.client.workflow.start('agentSession', {
      workflowId: workflowIdFor(sessionId),
      taskQueue: env.taskQueue,
      args: [{ options, carried: { foldBackoff: { failures: 'many', skip: -1e9, extra: { deep: [null] } } } }],
    });
    await say(sessionId, options, 'one');
    await say(sessionId, options, 'two');
    const events = await collectEvents(env.agent, sessionId, (e) => e.type === 'error' && e.errorType === 'SummaryFailed', { timeoutMs: 30_000 });
    // Read as no failures before it: this is the first, tried again after the next turn.
    expect((events.at(-1)?.event as { message: string }).message).toMatch(/retried after the next turn\.$/);
    expect((await env.agent.getSession(sessionId)).counters.summaryFailures).toBe(1);
  });

  it('archives when idle and continues from the archive on the next message without a seam', async () => {
    const sessionId = uniqueId('s');
    const options = sessionOptions(sessionId, { limits: { idleTimeoutMs: 1_500 } });
    env.model.script(
      [
        { respond: { kind: 'text', text: 'Nice to meet you, Ana.' } },
        {
          match: {
            lastUserMessage: 'When is my deadline?',
            where: (req) => contents(req).includes('My name is Ana. The deadline is 2026-12-24.') && systemOf(req).includes('deadline: '),
          },
          respond: { kind: 'text', text: 'December 24th, 2026.' },
        },
      ],
      { lane: sessionId },
    );
    await say(sessionId, options, 'My name is Ana. The deadline is 2026-12-24.');
    const first = await env.client.workflow.getHandle<typeof agentSession>(workflowIdFor(sessionId)).result();
    expect(first).toMatchObject({ status: 'archived', version: 1, turns: 1 });
    const archive = await new SessionArchiveRepository(env.db).load(sessionId);
    expect(archive).toMatchObject({ status: 'archived', version: 1, namespace: { tenant: 'acme', user: 'ana' } });
    expect(archive!.window).toHaveLength(1);
    expect(archive!.keyFacts.map((f) => f.subject)).toContain('deadline');

    const sent = await env.agent.send(options, { text: 'When is my deadline?', expectedVersion: 1 });
    expect(sent).toEqual({ turnId: 'turn-2', version: 2 });
    expect(await env.agent.waitForTurn(sessionId, sent.turnId)).toMatchObject({ outcome: 'completed', text: 'December 24th, 2026.' });
    const view = await env.agent.getSession(sessionId);
    expect(view).toMatchObject({ status: 'active', version: 2 });
    expect(view.window.map((t) => t.turnId)).toEqual(['turn-1', 'turn-2']);
    env.model.assertDone(sessionId);
  });

  it('a save retried after it landed returns its version; a different run\'s save is still a conflict', async () => {
    const sessionId = uniqueId('s');
    env.model.script([{ respond: { kind: 'text', text: 'hi' } }], { lane: sessionId });
    await say(sessionId, sessionOptions(sessionId), 'hello');
    await env.agent.end(sessionId);
    await env.client.workflow.getHandle(workflowIdFor(sessionId)).result();
    const repo = new SessionArchiveRepository(env.db);
    const archive = (await repo.load(sessionId))!;
    // The same write again, as an activity retried after its save landed would make it.
    await expect(repo.save({ archive, baseVersion: 0 })).resolves.toEqual({ version: archive.version });
    const other = { ...archive, archivedAt: new Date(Date.parse(archive.archivedAt) + 1_000).toISOString() };
    await expect(repo.save({ archive: other, baseVersion: 0 })).rejects.toMatchObject({ type: 'SessionVersionConflict' });
  });

  it('ends and archives even while a client is reading its events', async () => {
    const sessionId = uniqueId('s');
    env.model.script([{ respond: { kind: 'text', text: 'hi' } }], { lane: sessionId });
    await say(sessionId, sessionOptions(sessionId), 'hello');
    // A reader that waits for an event that never comes keeps a poll open in the workflow.
    const reading = collectEvents(env.agent, sessionId, () => false, { timeoutMs: 20_000 }).catch((err: unknown) => err);
    await new Promise((r) => setTimeout(r, 500));
    await env.agent.end(sessionId);
    const result = await env.client.workflow.getHandle<typeof agentSession>(workflowIdFor(sessionId)).result();
    expect(result).toMatchObject({ status: 'archived', version: 1 });
    // The reader ends when the session's run ends, not at its own timeout.
    expect(await reading).toEqual(expect.any(Array));
    // The archive ends with the session's last word: it was archived, and why.
    const archived = await collectEvents(env.agent, sessionId, () => false, { timeoutMs: 20_000 });
    expect(archived.at(-1)?.event).toMatchObject({ type: 'status_change', status: 'archived', reason: 'ended by request' });
    expect(archived.map((e) => e.offset)).toEqual(archived.map((_, i) => i));
  });

  it('lets only one of two runs restored from the same archive write it back', async () => {
    const repo = new SessionArchiveRepository(env.db);
    const sessionId = uniqueId('s');
    const options = sessionOptions(sessionId, { limits: { idleTimeoutMs: 1_000 } });
    env.model.script([{ respond: { kind: 'text', text: 'one' } }, { respond: { kind: 'text', text: 'two' } }], { lane: sessionId });
    await say(sessionId, options, 'one');
    await env.client.workflow.getHandle(workflowIdFor(sessionId)).result();
    const restoredFrom = (await repo.load(sessionId))!;

    // Two writers that both restored version 1: the first wins, the second is refused.
    const later = (ms: number) => new Date(Date.parse(restoredFrom.archivedAt) + ms).toISOString();
    await repo.save({ archive: { ...restoredFrom, version: 3, archivedAt: later(1_000) }, baseVersion: 1 });
    await expect(repo.save({ archive: { ...restoredFrom, version: 2, archivedAt: later(2_000) }, baseVersion: 1 })).rejects.toMatchObject({ type: 'SessionVersionConflict' });
    expect((await repo.load(sessionId))!.version).toBe(3);

    // A session run that restored version 3 loses to a write that happened behind its back.
    const sent = await env.agent.send({ ...options, limits: { idleTimeoutMs: 60_000 } }, { text: 'two' });
    await env.agent.waitForTurn(sessionId, sent.turnId);
    await env.db.collection<{ _id: string }>(SESSIONS_COLLECTION).updateOne({ _id: sessionId }, { $set: { version: 9 } });
    await env.agent.end(sessionId);
    const result = await env.client.workflow.getHandle<typeof agentSession>(workflowIdFor(sessionId)).result();
    expect(result.archiveConflict).toMatch(/written by another run/);
    expect((await repo.load(sessionId))!.version).toBe(9);
  });

  it('expires archives past their retention through the maintenance schedule', async () => {
    const sessionId = uniqueId('s');
    const options = sessionOptions(sessionId, { limits: { retentionMs: 500 } });
    env.model.script([{ respond: { kind: 'text', text: 'bye' } }], { lane: sessionId });
    await say(sessionId, options, 'hello');
    await env.agent.end(sessionId);
    await env.client.workflow.getHandle(workflowIdFor(sessionId)).result();
    await new Promise((r) => setTimeout(r, 600));
    const scheduleId = await ensureMaintenanceSchedule({ address: env.config.temporal.address, namespace: env.config.temporal.namespace, taskQueue: env.taskQueue, everyMs: 3_600_000 });
    const schedule = env.client.schedule.getHandle(scheduleId);
    try {
      await schedule.trigger();
      const expired = await eventually(async () => {
        const doc = await new SessionArchiveRepository(env.db).load(sessionId);
        return doc?.status === 'expired' ? doc : null;
      }, 'the archive to expire');
      expect(expired.window).toEqual([]);
      expect(expired.keyFacts).toEqual([]);
      // A worker started later with another MAINTENANCE_EVERY_MS moves the schedule to it (it kept the first one's).
      expect((await schedule.describe()).spec.intervals?.[0]?.every).toBe(3_600_000);
      await ensureMaintenanceSchedule({ address: env.config.temporal.address, namespace: env.config.temporal.namespace, taskQueue: env.taskQueue, everyMs: 600_000 });
      expect((await schedule.describe()).spec.intervals).toEqual([expect.objectContaining({ every: 600_000 })]);
    } finally {
      await schedule.delete();
    }
  });
});
