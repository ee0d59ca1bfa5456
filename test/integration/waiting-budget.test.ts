import { WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { SessionEvent } from '../../client';
import { readEventsQuery, workflowIdFor } from '../../workflows/messages';
import { MAX_POLLS_PER_RUN, MAX_WAITING_POLLS, MAX_WAITING_TURN_WAITS } from '../../workflows/waiting-budget';
import { eventually, sessionOptions, startTestEnv, uniqueId, type TestEnv } from '../support/test-env';

/*
 * Calls that wait on a session (event polls, turn waits) each hold one of
 * the server's ten in-flight updates. Ten readers of one session used to
 * leave no room for a message: it failed after about 40 s with "Workflow
 * Update failed". The session now lets a few wait and refuses the rest by
 * name; the typed client reads the same by query.
 */

const POLL = '__temporal_workflow_stream_poll';
const principal = { tenant: 'acme', user: 'ana' };

let env: TestEnv;
beforeAll(async () => {
  env = await startTestEnv({ name: 'waiting-budget' });
});
afterAll(async () => {
  await env?.close();
});

/** A reader that keeps every event it gets until stopped. */
function reader(sessionId: string): { events: SessionEvent[]; stop(): void; done: Promise<unknown> } {
  const events: SessionEvent[] = [];
  const abort = new AbortController();
  const done = (async () => {
    for await (const e of env.agent.events(sessionId, { fromOffset: 0, signal: abort.signal })) events.push(e);
  })();
  return { events, stop: () => abort.abort(), done };
}

const sawTurnEnd = (events: SessionEvent[], turnId: string) => events.some((e) => e.event.type === 'turn_completed' && e.event.turnId === turnId);

/** The failure type of a refused update, or why it was not refused. */
async function refusal(call: Promise<unknown>): Promise<{ type?: string; message: string }> {
  try {
    await call;
    return { message: 'accepted' };
  } catch (err) {
    const cause = err instanceof WorkflowUpdateFailedError ? err.cause : err;
    return cause instanceof ApplicationFailure ? { type: cause.type ?? undefined, message: cause.message } : { message: String(err) };
  }
}

describe('calls that wait on a session', () => {
  it('twelve event readers leave room for a message, and every reader gets every event once, in order', async () => {
    const sessionId = uniqueId('crowd');
    env.model.script([{ times: 2, respond: { kind: 'text', text: 'answer' } }], { lane: sessionId });
    await env.agent.ask(sessionOptions(sessionId), { text: 'first' });
    const readers = Array.from({ length: 12 }, () => reader(sessionId));
    try {
      await eventually(() => readers.every((r) => sawTurnEnd(r.events, 'turn-1')), 'every reader to see the first turn end');
      const started = Date.now();
      const second = await env.agent.ask(sessionOptions(sessionId), { text: 'second' });
      expect(second.turn.outcome).toBe('completed');
      // Refused by the server, it failed after about 40 s of the client's retries.
      expect(Date.now() - started).toBeLessThan(10_000);
      await eventually(() => readers.every((r) => sawTurnEnd(r.events, 'turn-2')), 'every reader to see the second turn end');
      const reference = readers[0]!.events.map((e) => `${e.offset}:${e.event.type}`);
      for (const r of readers) {
        expect(r.events.map((e) => e.offset)).toEqual(r.events.map((_, i) => i));
        expect(r.events.map((e) => `${e.offset}:${e.event.type}`).slice(0, reference.length)).toEqual(reference.slice(0, r.events.length));
      }
    } finally {
      for (const r of readers) r.stop();
      await Promise.all(readers.map((r) => r.done.catch(() => undefined)));
    }
  }, 90_000);

  it('a plain poll past the budget is refused by name, and readEvents answers plain JSON (bad input refused by field)', async () => {
    const sessionId = uniqueId('plain');
    env.model.script([{ times: 1, respond: { kind: 'text', text: 'answer' } }], { lane: sessionId });
    await env.agent.ask(sessionOptions(sessionId), { text: 'first' });
    const handle = env.client.workflow.getHandle(workflowIdFor(sessionId));
    const { items } = await handle.query(readEventsQuery, { fromOffset: 0 });
    const end = items.length;
    expect(items.map((i) => i.offset)).toEqual(items.map((_, i) => i));
    expect(items.some((i) => i.event.type === 'turn_completed')).toBe(true);
    // Polls from past the end wait for the next event: the budget's worth of them is taken.
    const waiting = Array.from({ length: MAX_WAITING_POLLS }, () =>
      handle.startUpdate(POLL, { args: [{ topics: ['events'], from_offset: end }], waitForStage: 'ACCEPTED' as never }),
    );
    await Promise.all(waiting);
    const refused = await refusal(handle.executeUpdate(POLL, { args: [{ topics: ['events'], from_offset: end }] }));
    expect(refused.type).toBe('TooManyWaiting');
    expect(refused.message).toContain(`at most ${MAX_WAITING_POLLS}`);
    expect(refused.message).toContain('readEvents');
    // Messages still go through, and the waiting polls get their events.
    env.model.script([{ times: 1, respond: { kind: 'text', text: 'again' } }], { lane: sessionId });
    const second = await env.agent.ask(sessionOptions(sessionId), { text: 'second' });
    expect(second.turn.outcome).toBe('completed');
    for (const update of await Promise.all(waiting)) {
      const result = (await update.result()) as { items: unknown[] };
      expect(result.items.length).toBeGreaterThan(0);
    }
    const page = await handle.query(readEventsQuery, { fromOffset: end, limit: 2 });
    expect(page.items.map((i) => i.offset)).toEqual([end, end + 1]);
    expect(page.nextOffset).toBe(end + 2);
    // Poison input: refused with the field named, and the session goes on.
    await expect(handle.query('readEvents', { fromOffset: -1 })).rejects.toThrow(/fromOffset/);
    await expect(handle.query('readEvents', { fromOffset: 0, limit: 5_000 })).rejects.toThrow(/limit/);
    await expect(handle.query('readEvents', { from_offset: 0 })).rejects.toThrow(/from_offset/);
    await expect(handle.query('readEvents', 'x'.repeat(100_000))).rejects.toThrow(/readEvents/);
    await expect(handle.query('getTurn', {})).rejects.toThrow(/turnId/);
    await expect(handle.query('getTurn', { turnId: 'turn-1', principal })).rejects.toThrow(/principal/);
    expect(await handle.query('getTurn', { turnId: 'turn-1' })).toMatchObject({ turnId: 'turn-1', state: 'finished', result: { outcome: 'completed', text: 'answer' } });
    expect(await handle.query('getTurn', { turnId: 'turn-99' })).toEqual({ turnId: 'turn-99', state: 'unknown' });
    expect((await env.agent.getSession(sessionId)).version).toBe(2);
  }, 60_000);

  it('turn waits past the budget: a plain wait is refused by name with nothing accepted, and ask() still answers', async () => {
    const sessionId = uniqueId('turns');
    // The first turn streams its answer slowly, so waits for it stay waiting.
    env.model.script(
      [
        { respond: { kind: 'text', text: 'a slow answer, twenty', chunkSize: 1, delayMs: 400 } },
        { respond: { kind: 'text', text: 'second answer' } },
      ],
      { lane: sessionId },
    );
    const options = sessionOptions(sessionId, { busyPolicy: 'queue' });
    const sent = await env.agent.send(options, { text: 'first' });
    const waits = Array.from({ length: MAX_WAITING_TURN_WAITS }, () => env.agent.waitForTurn(sessionId, sent.turnId));
    const handle = env.client.workflow.getHandle(workflowIdFor(sessionId));
    // Time for the three waits to be accepted (the turn streams for about 8 s).
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const wait = await refusal(handle.executeUpdate('waitForTurn', { args: [{ turnId: sent.turnId, principal }] }));
    expect(wait.type).toBe('TooManyWaiting');
    expect(wait.message).toContain('getTurn');
    const message = await refusal(handle.executeUpdate('sendMessage', { args: [{ text: 'refused', waitForTurn: true, principal }] }));
    expect(message.type).toBe('TooManyWaiting');
    expect(message.message).toContain(`at most ${MAX_WAITING_TURN_WAITS}`);
    expect(message.message).toContain('Nothing was accepted');
    expect((await env.agent.getSession(sessionId)).version).toBe(1);
    // The typed client's waitForTurn, refused the same way, reads the turn by query.
    const fourth = env.agent.waitForTurn(sessionId, sent.turnId);
    // Its ask() sends without waiting, then reads the turn by query.
    const asked = await env.agent.ask(options, { text: 'second' });
    expect(asked.turn).toMatchObject({ outcome: 'completed', text: 'second answer' });
    expect(asked.turnId).toBe('turn-2');
    for (const result of await Promise.all([...waits, fourth])) expect(result).toMatchObject({ outcome: 'completed', text: 'a slow answer, twenty' });
    expect((await env.agent.getSession(sessionId)).version).toBe(2);
  }, 60_000);

  it('a reader stopped while it pauses between polls ends at once, leaving no poll behind', async () => {
    const sessionId = uniqueId('stop');
    env.model.script([{ times: 1, respond: { kind: 'text', text: 'answer' } }], { lane: sessionId });
    await env.agent.ask(sessionOptions(sessionId), { text: 'first' });
    const r = reader(sessionId);
    // Stopped the moment the last event arrives: the stream library is then in its 100 ms pause before the next poll.
    await eventually(() => sawTurnEnd(r.events, 'turn-1'), 'the reader to see the turn end', 20_000);
    r.stop();
    const ended = await Promise.race([r.done.then(() => 'ended'), new Promise((resolve) => setTimeout(() => resolve('still reading after 5 s'), 5_000))]);
    expect(ended).toBe('ended');
    // No poll of the reader's waits on in the session: the whole budget is free for others.
    const handle = env.client.workflow.getHandle(workflowIdFor(sessionId));
    const { nextOffset } = await handle.query(readEventsQuery, { fromOffset: 0 });
    const polls = await Promise.all(
      Array.from({ length: MAX_WAITING_POLLS }, () => refusal(handle.startUpdate(POLL, { args: [{ topics: ['events'], from_offset: nextOffset }], waitForStage: 'ACCEPTED' as never }))),
    );
    expect(polls.map((p) => p.message)).toEqual(polls.map(() => 'accepted'));
    await env.agent.end(sessionId);
  }, 60_000);

  it(`a run that answered ${MAX_POLLS_PER_RUN} polls refuses more, then continues as new after its turn; readers keep every event`, async () => {
    const sessionId = uniqueId('budget');
    env.model.script([{ times: 2, respond: { kind: 'text', text: 'answer' } }], { lane: sessionId });
    await env.agent.ask(sessionOptions(sessionId), { text: 'first' });
    const handle = env.client.workflow.getHandle(workflowIdFor(sessionId));
    const { runId } = await handle.describe();
    // Polls for events already there answer at once; no more at a time than may wait (polls accepted in one
    // workflow task all count as waiting until it ends, as the server counts them in flight).
    for (let i = 0; i < MAX_POLLS_PER_RUN; i += MAX_WAITING_POLLS) {
      const batch = Math.min(MAX_WAITING_POLLS, MAX_POLLS_PER_RUN - i);
      await Promise.all(Array.from({ length: batch }, () => handle.executeUpdate(POLL, { args: [{ topics: ['events'], from_offset: 0 }] })));
    }
    const refused = await refusal(handle.executeUpdate(POLL, { args: [{ topics: ['events'], from_offset: 0 }] }));
    expect(refused.type).toBe('TooManyWaiting');
    expect(refused.message).toContain(`at most ${MAX_POLLS_PER_RUN} a run`);
    // Its polls refused, the reader reads by query: it has the first turn before the second is sent.
    const r = reader(sessionId);
    try {
      await eventually(() => sawTurnEnd(r.events, 'turn-1'), 'the reader to read the first turn by query');
      await env.agent.ask(sessionOptions(sessionId), { text: 'second' });
      const next = await eventually(async () => {
        const d = await handle.describe();
        return d.runId !== runId ? d : undefined;
      }, 'the session to continue as new');
      expect(next.status.name).toBe('RUNNING');
      const first = await env.client.workflow.getHandle(workflowIdFor(sessionId), runId).describe();
      expect(first.status.name).toBe('CONTINUED_AS_NEW');
      // The new run takes polls again.
      const polled = (await handle.executeUpdate(POLL, { args: [{ topics: ['events'], from_offset: 0 }] })) as { items: unknown[] };
      expect(polled.items.length).toBeGreaterThan(0);
      await eventually(() => sawTurnEnd(r.events, 'turn-2'), 'the reader to see the second turn end');
      expect(r.events.map((e) => e.offset)).toEqual(r.events.map((_, i) => i));
    } finally {
      r.stop();
      await r.done.catch(() => undefined);
    }
  }, 120_000);
});
