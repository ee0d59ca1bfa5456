import { startTestEnv, sessionOptions, collectEvents, eventually, turnCompleted, uniqueId, type TestEnv } from '../support/test-env';
import { AgentClient, SessionBusyError, SessionClosedError, SessionVersionConflictError } from '../../client';
import { MAX_QUEUED_BYTES, MAX_QUEUED_MESSAGES } from '../../workflows/session-handlers';

let env: TestEnv;
beforeAll(async () => {
  env = await startTestEnv({ name: 'basics' });
});
afterAll(async () => {
  await env?.close();
});

describe('a session workflow', () => {
  it('streams the model answer as text deltas through the openai SDK and completes the turn', async () => {
    const sessionId = uniqueId('s');
    env.model.script([{ respond: { kind: 'text', text: 'Hello Ana, how can I help today?', chunkSize: 5, delayMs: 5 } }], { lane: sessionId });
    const { turnId, version } = await env.agent.send(sessionOptions(sessionId), { text: 'hi' });
    expect(version).toBe(1);
    const events = await collectEvents(env.agent, sessionId, turnCompleted(turnId));
    const deltas = events.map((e) => e.event).filter((e) => e.type === 'text_delta');
    expect(deltas.length).toBeGreaterThan(3);
    expect(deltas.map((d) => (d.type === 'text_delta' ? d.delta : '')).join('')).toBe('Hello Ana, how can I help today?');
    const done = events[events.length - 1]?.event;
    expect(done).toMatchObject({ type: 'turn_completed', outcome: 'completed', text: 'Hello Ana, how can I help today?', version: 1 });
    const request = env.model.requestsFor(sessionId)[0];
    expect(request?.stream).toBe(true);
    const view = await env.agent.getSession(sessionId);
    expect(view).toMatchObject({ status: 'active', version: 1, activity: 'idle', pendingConfirmations: [] });
    expect(view.window).toHaveLength(1);
    env.model.assertDone(sessionId);
  });

  it('keeps every delta in order when some are signalled during the call and the last batch comes with the result', async () => {
    const sessionId = uniqueId('s');
    const text = 'A slower answer, streamed in many small pieces over a few hundred ms.';
    env.model.script([{ respond: { kind: 'text', text, chunkSize: 3, delayMs: 15 } }], { lane: sessionId });
    const { turnId } = await env.agent.send(sessionOptions(sessionId), { text: 'take your time' });
    const events = (await collectEvents(env.agent, sessionId, turnCompleted(turnId))).map((e) => e.event);
    const deltas = events.filter((e) => e.type === 'text_delta');
    expect(deltas.map((d) => (d.type === 'text_delta' ? d.delta : '')).join('')).toBe(text);
    // Spread over several batches: some were published before the model finished, not all at the end.
    const firstDeltaAt = Date.parse(deltas[0]?.at ?? '');
    const lastDeltaAt = Date.parse(deltas[deltas.length - 1]?.at ?? '');
    expect(lastDeltaAt - firstDeltaAt).toBeGreaterThan(100);
    const history = await env.agent.client.workflow.getHandle(`session-${sessionId}`).fetchHistory();
    const publishSignals = history.events?.filter((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'textDeltas');
    expect(publishSignals?.length).toBeGreaterThan(0);
    const done = events.findIndex((e) => e.type === 'turn_completed');
    expect(events.findIndex((e) => e.type === 'text_delta')).toBeLessThan(done);
    expect(events.slice(done + 1).some((e) => e.type === 'text_delta')).toBe(false);
    env.model.assertDone(sessionId);
  });

  it('a long streamed answer is signalled in batches that grow: 6 s of streaming takes under 70 signals, every delta in order', async () => {
    const sessionId = uniqueId('s');
    // 300 pieces, 20 ms apart: at a flat 50 ms a batch this took about 100 signals, four history events each.
    const text = Array.from({ length: 300 }, (_, i) => String.fromCharCode(97 + (i % 26))).join('');
    env.model.script([{ respond: { kind: 'text', text, chunkSize: 1, delayMs: 20 } }], { lane: sessionId });
    const asked = await env.agent.ask(sessionOptions(sessionId), { text: 'a long one' });
    expect(asked.turn.text).toBe(text);
    const events = (await collectEvents(env.agent, sessionId, turnCompleted(asked.turnId))).map((e) => e.event);
    expect(events.flatMap((e) => (e.type === 'text_delta' ? [e.delta] : [])).join('')).toBe(text);
    const history = await env.agent.client.workflow.getHandle(`session-${sessionId}`).fetchHistory();
    const signals = history.events?.filter((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'textDeltas').length ?? 0;
    expect(signals).toBeGreaterThan(10);
    expect(signals).toBeLessThan(70);
  }, 60_000);

  it('answers ask() with the finished turn in one update, and a repeated clientMessageId with the same turn', async () => {
    const sessionId = uniqueId('s');
    env.model.script([{ respond: { kind: 'text', text: 'done in one go' } }], { lane: sessionId });
    const first = await env.agent.ask(sessionOptions(sessionId), { text: 'go', clientMessageId: 'ask-1' });
    expect(first).toMatchObject({ turnId: 'turn-1', version: 1, turn: { turnId: 'turn-1', outcome: 'completed', text: 'done in one go', modelCalls: 1 } });
    const again = await env.agent.ask(sessionOptions(sessionId), { text: 'go', clientMessageId: 'ask-1' });
    expect(again).toEqual(first);
    expect(env.model.requestsFor(sessionId)).toHaveLength(1);
    const updates = (await env.agent.client.workflow.getHandle(`session-${sessionId}`).fetchHistory()).events?.filter(
      (e) => e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name === 'waitForTurn',
    );
    expect(updates).toHaveLength(0);
  });

  it('rejects a stale expectedVersion with the current version and writes nothing', async () => {
    const sessionId = uniqueId('s');
    env.model.script([{ respond: { kind: 'text', text: 'one' } }], { lane: sessionId });
    const first = await env.agent.send(sessionOptions(sessionId), { text: 'first' });
    await env.agent.waitForTurn(sessionId, first.turnId);
    const err = await env.agent.send(sessionOptions(sessionId), { text: 'second', expectedVersion: 0 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SessionVersionConflictError);
    expect((err as SessionVersionConflictError).currentVersion).toBe(1);
    const view = await env.agent.getSession(sessionId);
    expect(view.version).toBe(1);
    expect(view.counters.turns).toBe(1);
    expect(env.model.requestsFor(sessionId)).toHaveLength(1);
  });

  it('answers the same clientMessageId twice with the first result and runs it once', async () => {
    const sessionId = uniqueId('s');
    env.model.script([{ respond: { kind: 'text', text: 'once' } }], { lane: sessionId });
    const a = await env.agent.send(sessionOptions(sessionId), { text: 'do it', clientMessageId: 'm-1' });
    await env.agent.waitForTurn(sessionId, a.turnId);
    const b = await env.agent.send(sessionOptions(sessionId), { text: 'do it', clientMessageId: 'm-1' });
    const c = await env.agent.sendTo(sessionId, { text: 'do it', clientMessageId: 'm-1', expectedVersion: 0 });
    expect(b).toEqual(a);
    expect(c).toEqual(a);
    expect(env.model.requestsFor(sessionId)).toHaveLength(1);
    expect((await env.agent.getSession(sessionId)).counters.turns).toBe(1);
  });

  it('delivers events in order and a subscriber resuming from an offset misses none', async () => {
    const sessionId = uniqueId('s');
    env.model.script(
      [
        { respond: { kind: 'text', text: 'first answer with several words', chunkSize: 4 } },
        { respond: { kind: 'text', text: 'second answer', chunkSize: 3 } },
      ],
      { lane: sessionId },
    );
    const t1 = await env.agent.send(sessionOptions(sessionId), { text: 'one' });
    await env.agent.waitForTurn(sessionId, t1.turnId);
    const t2 = await env.agent.sendTo(sessionId, { text: 'two' });
    const all = await collectEvents(env.agent, sessionId, turnCompleted(t2.turnId));
    expect(all.map((e) => e.offset)).toEqual(all.map((_, i) => i));
    const from = Math.floor(all.length / 2);
    const resumed = await collectEvents(env.agent, sessionId, turnCompleted(t2.turnId), { fromOffset: from });
    expect(resumed).toEqual(all.slice(from));
  });

  it('can be found by user and status through search attributes, with a memo to read', async () => {
    const sessionId = uniqueId('s');
    const user = uniqueId('user');
    env.model.script([{ respond: { kind: 'text', text: 'hello' } }], { lane: sessionId });
    const agent = env.agent.as({ tenant: 'acme', user });
    const { turnId } = await agent.send(sessionOptions(sessionId, { namespace: { tenant: 'acme', user } }), { text: 'hi' });
    await agent.waitForTurn(sessionId, turnId);
    const found = await eventually(async () => {
      const hits = [];
      for await (const wf of env.client.workflow.list({ query: `SessionUser = '${user}' AND SessionStatus = 'active'` })) hits.push(wf);
      return hits.length ? hits : null;
    }, 'the session in visibility');
    expect(found.map((wf) => wf.workflowId)).toEqual([`session-${sessionId}`]);
    const description = await env.client.workflow.getHandle(`session-${sessionId}`).describe();
    expect(description.memo).toMatchObject({ user, tenant: 'acme', status: 'active', version: 1 });
  });

  it('sets its own search attributes when another client started it without them', async () => {
    const sessionId = uniqueId('s');
    env.model.script([{ respond: { kind: 'text', text: 'hello' } }], { lane: sessionId });
    // As another SDK or the CLI would: a plain start, no search attributes.
    await env.client.workflow.start('agentSession', {
      workflowId: `session-${sessionId}`,
      taskQueue: env.taskQueue,
      args: [{ options: sessionOptions(sessionId) }],
    });
    const { turnId } = await env.agent.sendTo(sessionId, { text: 'hi' });
    await env.agent.waitForTurn(sessionId, turnId);
    const found = await eventually(async () => {
      const hits = [];
      const query = `WorkflowId = 'session-${sessionId}' AND SessionUser = 'ana' AND SessionTenant = 'acme' AND SessionStatus = 'active' AND SessionPendingApprovals = 0`;
      for await (const wf of env.client.workflow.list({ query })) hits.push(wf);
      return hits.length ? hits : null;
    }, 'the session in visibility by the attributes it set itself');
    expect(found.map((wf) => wf.workflowId)).toEqual([`session-${sessionId}`]);
  });

  it('rejects an invalid message before anything is written', async () => {
    const sessionId = uniqueId('s');
    await expect(env.agent.send(sessionOptions(sessionId), { text: '' })).rejects.toThrow(/text: text must not be empty/);
    await expect(env.agent.send({ ...sessionOptions(sessionId), sessionId: 'bad id!' }, { text: 'x' })).rejects.toThrow(/sessionId/);
  });
});

describe('the typed client at its edges', () => {
  it('a tenant and user of 128 CJK characters each can send: the message id stays under the server\'s 1,000 bytes, and a repeat is still one turn', async () => {
    const sessionId = uniqueId('s');
    const principal = { tenant: '租'.repeat(128), user: '户'.repeat(128) };
    const client = new AgentClient({ client: env.client, taskQueue: env.taskQueue, principal });
    env.model.script([{ respond: { kind: 'text', text: 'Hello.' } }], { lane: sessionId });
    const options = sessionOptions(sessionId, { namespace: principal });
    // Before, the server refused the update: "UpdateId length exceeds limit".
    const first = await client.ask(options, { text: 'hi', clientMessageId: 'm-1' });
    expect(first).toMatchObject({ turnId: 'turn-1', turn: { text: 'Hello.' } });
    expect(await client.ask(options, { text: 'hi', clientMessageId: 'm-1' })).toEqual(first);
  });

  it('ask() with the id of a message sent before without waiting answers with that turn, not an error', async () => {
    const sessionId = uniqueId('s');
    env.model.script([{ respond: { kind: 'text', text: 'Once.' } }], { lane: sessionId });
    const sent = await env.agent.send(sessionOptions(sessionId), { text: 'go', clientMessageId: 'k-1' });
    const asked = await env.agent.ask(sessionOptions(sessionId), { text: 'go', clientMessageId: 'k-1' });
    expect(asked).toMatchObject({ turnId: sent.turnId, version: sent.version, turn: { turnId: sent.turnId, outcome: 'completed', text: 'Once.' } });
    expect(env.model.requestsFor(sessionId)).toHaveLength(1);
  });

  it('end() and interrupt() with a reason the session would ignore are refused here, named', async () => {
    const sessionId = uniqueId('s');
    env.model.script([{ respond: { kind: 'text', text: 'Hi.' } }], { lane: sessionId });
    await env.agent.ask(sessionOptions(sessionId), { text: 'hi' });
    await expect(env.agent.end(sessionId, 'x'.repeat(2_001))).rejects.toThrow(/Invalid end request: reason: /);
    await expect(env.agent.interrupt(sessionId, 'x'.repeat(2_001))).rejects.toThrow(/Invalid interrupt: reason: /);
    expect((await env.agent.getSession(sessionId)).counters.signalsIgnored).toBe(0);
  });

  it('ask() on a run terminated before it answered is SessionClosedError, not a raw update failure', async () => {
    const sessionId = uniqueId('s');
    env.model.script([{ respond: { kind: 'text', text: 'a slow answer '.repeat(20), chunkSize: 4, delayMs: 30 } }], { lane: sessionId });
    const asking = env.agent.ask(sessionOptions(sessionId), { text: 'take your time' }).catch((err: unknown) => err);
    const handle = env.agent.client.workflow.getHandle(`session-${sessionId}`);
    await eventually(() => handle.describe().then(() => true, () => false), 'the session to start');
    await collectEvents(env.agent, sessionId, (e) => e.type === 'text_delta');
    await handle.terminate('test: an operator stops it');
    const err = await asking;
    expect(err).toBeInstanceOf(SessionClosedError);
    expect((err as Error).message).toMatch(/run ended before it answered/);
  });
});

describe('messages waiting for their turns', () => {
  it('past 32 waiting, a message is refused with SessionBusyError naming the bound, and nothing of it is written', async () => {
    const sessionId = uniqueId('s');
    // The first turn waits for a person (a call that needs confirmation), so the others stay queued however slow the sends.
    env.model.script([{ respond: { kind: 'tool_calls', calls: [{ name: 'local_cancel_meeting', arguments: { meeting_id: 'mtg_0123456789ab' } }] } }], { lane: sessionId });
    const options = sessionOptions(sessionId, { busyPolicy: 'queue' });
    await env.agent.send(options, { text: 'first' });
    await eventually(async () => (await env.agent.getSession(sessionId)).pendingConfirmations.length === 1, 'the first turn to wait for confirmation');
    for (let i = 1; i <= MAX_QUEUED_MESSAGES; i++) await env.agent.send(options, { text: `waiting ${i}` });
    const err = await env.agent.send(options, { text: 'one too many' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SessionBusyError);
    expect((err as Error).message).toMatch(/has 32 messages \(\d+ bytes\) waiting for their turns, at most 32/);
    expect((await env.agent.getSession(sessionId)).version).toBe(1 + MAX_QUEUED_MESSAGES);
    await env.agent.client.workflow.getHandle(`session-${sessionId}`).terminate('test done');
  }, 30_000);

  it('past MAX_QUEUED_BYTES as written, a message is refused, however few characters: Chinese text weighs three bytes each', async () => {
    const sessionId = uniqueId('s');
    env.model.script([{ respond: { kind: 'tool_calls', calls: [{ name: 'local_cancel_meeting', arguments: { meeting_id: 'mtg_0123456789ab' } }] } }], { lane: sessionId });
    const options = sessionOptions(sessionId, { busyPolicy: 'queue' });
    await env.agent.send(options, { text: 'first' });
    await eventually(async () => (await env.agent.getSession(sessionId)).pendingConfirmations.length === 1, 'the first turn to wait for confirmation');
    // 30,000 characters, 90,000 bytes each: eleven fit in 1,000,000 bytes (330,000 characters), the twelfth does not.
    const text = (i: number) => `${i}${'会'.repeat(29_999)}`;
    for (let i = 1; i <= 11; i++) await env.agent.send(options, { text: text(i) });
    const err = await env.agent.send(options, { text: text(12) }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SessionBusyError);
    expect((err as Error).message).toMatch(new RegExp(`has 11 messages \\(\\d+ bytes\\) waiting for their turns, at most 32 \\(${MAX_QUEUED_BYTES} bytes with this one\\)`));
    expect((await env.agent.getSession(sessionId)).queuedMessages).toBe(11);
    await env.agent.client.workflow.getHandle(`session-${sessionId}`).terminate('test done');
  }, 60_000);
});

describe('answers that end short', () => {
  it('a filtered answer, one cut at the output limit after reasoning only, and an empty one each come with an error event that says so', async () => {
    const sessionId = uniqueId('s');
    const base = { id: 'chatcmpl-raw', object: 'chat.completion.chunk', created: 0, model: 'm' };
    const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({ ...base, choices: [{ index: 0, delta, finish_reason: finish }] });
    env.model.script(
      [
        { respond: { kind: 'raw_chunks', chunks: [chunk({ role: 'assistant', content: 'Here is how to' }), chunk({}, 'content_filter')] } },
        { respond: { kind: 'raw_chunks', chunks: [chunk({ role: 'assistant', reasoning_content: 'Let me think. '.repeat(10) }), chunk({}, 'length')] } },
        { respond: { kind: 'raw_chunks', chunks: [chunk({ role: 'assistant', content: '' }, 'stop')] } },
      ],
      { lane: sessionId },
    );
    const turns = [];
    for (const text of ['one', 'two', 'three']) turns.push((await env.agent.ask(sessionOptions(sessionId), { text })).turn);
    expect(turns.map((t) => [t.outcome, t.text])).toEqual([
      ['completed', 'Here is how to'],
      ['completed', ''],
      ['completed', ''],
    ]);
    const events = (await collectEvents(env.agent, sessionId, turnCompleted('turn-3'))).map((e) => e.event);
    const errors = events.flatMap((e) => (e.type === 'error' ? [[e.turnId, e.errorType, e.message]] : []));
    expect(errors).toEqual([
      ['turn-1', 'ModelOutputFiltered', expect.stringMatching(/filtered this answer \(finish_reason "content_filter"\).*Next step: rephrase/)],
      ['turn-2', 'ModelOutputCut', expect.stringMatching(/stopped at its output limit after 140 characters of reasoning before any answer/)],
      ['turn-3', 'ModelOutputInvalid', expect.stringMatching(/neither text nor a tool call \(finish_reason "stop"\)/)],
    ]);
  });
});

describe('a model that does not stop', () => {
  it('is read only up to the text a step keeps: the stream is closed there, not read to the end', async () => {
    const sessionId = uniqueId('s');
    // 2,000,000 characters over 10 s: a server with no output limit of its own, its model in a loop.
    env.model.script([{ respond: { kind: 'text', text: 'loop '.repeat(400_000), chunkSize: 20_000, delayMs: 100 } }], { lane: sessionId });
    const started = Date.now();
    const { turn } = await env.agent.ask(sessionOptions(sessionId), { text: 'say something' });
    expect(turn.outcome).toBe('completed');
    expect(turn.text.length).toBe(100_000);
    // Before, the whole stream was read, for text that was dropped: 10 s here, up to the activity's timeout six times over.
    expect(Date.now() - started).toBeLessThan(5_000);
    // Said so, as the session's own limit, not the model's.
    const events = (await collectEvents(env.agent, sessionId, turnCompleted(turn.turnId))).map((e) => e.event);
    expect(events.flatMap((e) => (e.type === 'error' ? [e.errorType, e.message] : []))).toEqual(['ModelOutputCut', expect.stringMatching(/The session stopped reading the model's answer past what one step keeps \(100000 characters of text/)]);
  }, 30_000);
});
