import { collectEvents, eventually, sessionOptions, startTestEnv, turnCompleted, uniqueId, type TestEnv } from '../support/test-env';
import { probeTools, type ProbeLog } from '../support/probe-tools';
import { workflowIdFor } from '../../workflows/messages';
import type { ChatRequest } from '../../scripted-model';
import { scriptTwoWipes } from '../support/scripted-steps';

const log: ProbeLog = { runs: [] };
let env: TestEnv;
beforeAll(async () => {
  env = await startTestEnv({ name: 'confirm', extraTools: probeTools(log) });
});
afterAll(async () => {
  await env?.close();
});

const runsOf = (sessionId: string) => log.runs.filter((r) => r.key.startsWith(`${sessionId}:`));
const lastToolResult = (env: TestEnv, sessionId: string) => {
  const requests = env.model.requestsFor(sessionId);
  const body = requests[requests.length - 1]!.body as ChatRequest;
  const tool = (body.messages as Array<{ role: string; content?: unknown }>).filter((m) => m.role === 'tool').at(-1);
  return JSON.parse(String(tool?.content));
};

function scriptWipe(sessionId: string, answer = 'Done.') {
  env.model.script(
    [
      { respond: { kind: 'tool_calls', calls: [{ id: `call_wipe_${sessionId}`, name: 'local_wipe', arguments: { confirmText: 'all' } }] } },
      { match: { hasToolResults: true }, respond: { kind: 'text', text: answer } },
    ],
    { lane: sessionId },
  );
}

async function pendingCall(sessionId: string): Promise<string> {
  const view = await eventually(async () => {
    const v = await env.agent.getSession(sessionId);
    return v.pendingConfirmations.length > 0 ? v : null;
  }, 'a pending confirmation');
  expect(view.activity).toBe('awaiting_confirmation');
  expect(view.pendingConfirmations[0]).toMatchObject({ toolName: 'local_wipe', arguments: { confirmText: 'all' }, risk: 'destructive' });
  return view.pendingConfirmations[0]!.toolCallId;
}

describe('confirmation of risky tools', () => {
  it('runs a destructive tool only after approval, with a confirmation_required event', async () => {
    const sessionId = uniqueId('s');
    scriptWipe(sessionId);
    const { turnId } = await env.agent.send(sessionOptions(sessionId), { text: 'wipe my notes' });
    const id = await pendingCall(sessionId);
    expect(runsOf(sessionId)).toEqual([]);
    // Operators find it in the Web UI's list by the count of calls waiting for a person.
    const listed = async (query: string) => {
      const ids: string[] = [];
      for await (const wf of env.client.workflow.list({ query: `WorkflowId = 'session-${sessionId}' AND ${query}` })) ids.push(wf.workflowId);
      return ids.length > 0 ? ids : null;
    };
    expect(await eventually(() => listed(`SessionPendingApprovals > 0 AND SessionStatus = 'awaiting_approval'`), 'the waiting session in visibility')).toEqual([`session-${sessionId}`]);
    await env.agent.approve(sessionId, id);
    expect(await eventually(() => listed(`SessionPendingApprovals = 0 AND SessionStatus = 'active'`), 'no call waiting in visibility')).toEqual([`session-${sessionId}`]);
    const events = await collectEvents(env.agent, sessionId, turnCompleted(turnId));
    expect(events.some((e) => e.event.type === 'confirmation_required' && e.event.confirmation.toolCallId === id)).toBe(true);
    expect(runsOf(sessionId)).toHaveLength(1);
    expect(lastToolResult(env, sessionId)).toEqual({ wiped: true });
    // Deciding twice is refused by the update validator.
    await expect(env.agent.approve(sessionId, id)).rejects.toThrow(/No tool call .* is waiting/);
  });

  it('with two calls waiting, approving one leaves the session awaiting confirmation, not running tools, until the other is decided', async () => {
    const sessionId = uniqueId('s');
    scriptTwoWipes(env.model, sessionId);
    const { turnId } = await env.agent.send(sessionOptions(sessionId), { text: 'wipe twice' });
    await eventually(async () => ((await env.agent.getSession(sessionId)).pendingConfirmations.length === 2 ? true : null), 'both calls to wait');
    await env.agent.approve(sessionId, 'call_wipe_a');
    const view = await eventually(async () => {
      const v = await env.agent.getSession(sessionId);
      return v.pendingConfirmations.length === 1 ? v : null;
    }, 'one call decided');
    // Before, it said running_tools while call_wipe_b still waited for a person.
    expect(view.activity).toBe('awaiting_confirmation');
    await env.agent.approve(sessionId, 'call_wipe_b');
    expect(await env.agent.waitForTurn(sessionId, turnId)).toMatchObject({ outcome: 'completed', text: 'Both done.' });
  });

  it('tells the model the user declined and never runs a denied call', async () => {
    const sessionId = uniqueId('s');
    scriptWipe(sessionId, 'Okay, I left them.');
    const { turnId } = await env.agent.send(sessionOptions(sessionId), { text: 'wipe my notes' });
    const id = await pendingCall(sessionId);
    await env.agent.deny(sessionId, id, 'I changed my mind');
    expect(await env.agent.waitForTurn(sessionId, turnId)).toMatchObject({ outcome: 'completed', text: 'Okay, I left them.' });
    expect(runsOf(sessionId)).toEqual([]);
    const result = lastToolResult(env, sessionId);
    expect(result.error.type).toBe('ToolDeclined');
    expect(result.error.message).toMatch(/declined this action: I changed my mind/);
  });

  it('counts no answer before the confirmation timeout as a denial', async () => {
    const sessionId = uniqueId('s');
    scriptWipe(sessionId, 'Not done.');
    const { turnId } = await env.agent.send(sessionOptions(sessionId, { limits: { confirmationTimeoutMs: 1_500 } }), { text: 'wipe' });
    const events = await collectEvents(env.agent, sessionId, turnCompleted(turnId));
    expect(runsOf(sessionId)).toEqual([]);
    expect(events.find((e) => e.event.type === 'confirmation_decided')?.event).toMatchObject({ approved: false, decidedBy: 'timeout' });
    expect(lastToolResult(env, sessionId).error.message).toMatch(/Nobody confirmed this action in time/);
  });

  it('asks for confirmation of write tools when the session policy says so', async () => {
    const sessionId = uniqueId('s');
    env.model.script(
      [
        { respond: { kind: 'tool_calls', calls: [{ id: `call_note_${sessionId}`, name: 'local_note', arguments: { text: 'milk' } }] } },
        { match: { hasToolResults: true }, respond: { kind: 'text', text: 'Noted.' } },
      ],
      { lane: sessionId },
    );
    const { turnId } = await env.agent.send(sessionOptions(sessionId, { toolPolicy: { confirmWrites: true } }), { text: 'note milk' });
    const view = await eventually(async () => {
      const v = await env.agent.getSession(sessionId);
      return v.pendingConfirmations.length ? v : null;
    }, 'pending write');
    expect(view.pendingConfirmations[0]).toMatchObject({ toolName: 'local_note', risk: 'write' });
    await env.agent.approve(sessionId, view.pendingConfirmations[0]!.toolCallId);
    await env.agent.waitForTurn(sessionId, turnId);
    expect(runsOf(sessionId)).toHaveLength(1);
  });

  it('accepts an approval sent as a plain Temporal signal by a client that is not ours', async () => {
    const sessionId = uniqueId('s');
    scriptWipe(sessionId);
    const { turnId } = await env.agent.send(sessionOptions(sessionId), { text: 'wipe' });
    const id = await pendingCall(sessionId);
    // Only the raw Temporal client and the message names: what `temporal workflow signal` does.
    await env.client.workflow.getHandle(workflowIdFor(sessionId)).signal('decideToolCall', { toolCallId: id, approved: true, principal: { tenant: 'acme', user: 'ana' } });
    await env.agent.waitForTurn(sessionId, turnId);
    expect(runsOf(sessionId)).toHaveLength(1);
  });
});

describe('interrupts', () => {
  it('aborts the in-flight model request and keeps the partial answer, marked interrupted', async () => {
    const sessionId = uniqueId('s');
    env.model.script([{ respond: { kind: 'text', text: 'This is a long answer that streams slowly word by word', chunkSize: 5, delayMs: 300 } }], { lane: sessionId });
    const { turnId } = await env.agent.send(sessionOptions(sessionId), { text: 'tell me a story' });
    await collectEvents(env.agent, sessionId, (e) => e.type === 'text_delta');
    await env.agent.interrupt(sessionId, 'user pressed stop');
    const events = await collectEvents(env.agent, sessionId, turnCompleted(turnId));
    const done = events.at(-1)!.event;
    expect(done).toMatchObject({ type: 'turn_completed', outcome: 'interrupted' });
    const partial = done.type === 'turn_completed' ? done.text : '';
    expect(partial.length).toBeGreaterThan(0);
    expect('This is a long answer that streams slowly word by word'.startsWith(partial)).toBe(true);
    expect(partial.length).toBeLessThan(54);
    await env.model.waitUntil((reqs) => reqs.some((r) => r.lane === sessionId && r.aborted));
    expect(events.some((e) => e.event.type === 'status_change' && e.event.reason === 'user pressed stop')).toBe(true);
    const view = await env.agent.getSession(sessionId);
    expect(view.window.at(-1)?.messages.at(-1)).toMatchObject({ role: 'assistant', content: expect.stringMatching(/\[interrupted: user pressed stop\]$/) });
    expect(view.counters.interrupts).toBe(1);
  });

  it("keeps only the newest attempt's text when a model call that was retried is interrupted", async () => {
    const sessionId = uniqueId('s');
    const answer = 'Hello world, this answer streams slowly word by word';
    env.model.script(
      [
        { respond: { kind: 'truncated_stream', text: 'Hello wor' } },
        { respond: { kind: 'text', text: answer, chunkSize: 5, delayMs: 300 } },
      ],
      { lane: sessionId },
    );
    const { turnId } = await env.agent.send(sessionOptions(sessionId), { text: 'say hello' });
    const streamed = await collectEvents(env.agent, sessionId, (e) => e.type === 'text_delta' && e.attempt === 2);
    // Not vacuous: the failed attempt's text is on the stream too.
    expect(streamed.some((e) => e.event.type === 'text_delta' && e.event.attempt === 1)).toBe(true);
    await env.agent.interrupt(sessionId, 'stop');
    const done = (await collectEvents(env.agent, sessionId, turnCompleted(turnId))).at(-1)!.event;
    expect(done).toMatchObject({ type: 'turn_completed', outcome: 'interrupted' });
    const partial = done.type === 'turn_completed' ? done.text : '';
    expect(partial.length).toBeGreaterThan(0);
    expect(answer.startsWith(partial)).toBe(true);
    const view = await env.agent.getSession(sessionId);
    expect(view.window.at(-1)?.messages.at(-1)).toMatchObject({ role: 'assistant', content: `${partial} [interrupted: stop]` });
  });

  it('aborts a hanging model request', async () => {
    const sessionId = uniqueId('s');
    env.model.script([{ respond: { kind: 'hang' } }], { lane: sessionId });
    const { turnId } = await env.agent.send(sessionOptions(sessionId), { text: 'hello?' });
    await env.model.waitForRequests(1, { lane: sessionId });
    await env.agent.interrupt(sessionId);
    expect(await env.agent.waitForTurn(sessionId, turnId)).toMatchObject({ outcome: 'interrupted' });
    await env.model.waitUntil((reqs) => reqs.some((r) => r.lane === sessionId && r.aborted));
  });

  it('cancels a running tool, whose executor observes the abort, and nothing keeps running', async () => {
    const sessionId = uniqueId('s');
    env.model.script([{ respond: { kind: 'tool_calls', calls: [{ name: 'local_sleepy', arguments: { ms: 20_000, label: 'long' } }] } }], { lane: sessionId });
    const { turnId } = await env.agent.send(sessionOptions(sessionId), { text: 'take your time' });
    await eventually(() => runsOf(sessionId).length === 1, 'the tool to start');
    await env.agent.interrupt(sessionId, 'stop');
    expect(await env.agent.waitForTurn(sessionId, turnId)).toMatchObject({ outcome: 'interrupted' });
    // WAIT_CANCELLATION_COMPLETED: by the time the turn ends, the executor has already seen the abort.
    expect(runsOf(sessionId)[0]).toMatchObject({ aborted: true });
    expect(runsOf(sessionId)[0]!.end! - runsOf(sessionId)[0]!.start).toBeLessThan(15_000);
  });

  it('an interrupt while one call waits for confirmation and another runs ends the turn only once the running one has ended', async () => {
    const sessionId = uniqueId('s');
    env.model.script(
      [
        {
          respond: {
            kind: 'tool_calls',
            calls: [
              { id: 'call_wipe', name: 'local_wipe', arguments: { confirmText: 'all' } },
              { id: 'call_sleep', name: 'local_sleepy', arguments: { ms: 20_000, label: 'sibling' } },
            ],
          },
        },
      ],
      { lane: sessionId },
    );
    const { turnId } = await env.agent.send(sessionOptions(sessionId), { text: 'wipe and wait' });
    await pendingCall(sessionId);
    await eventually(() => runsOf(sessionId).length === 1, 'the sibling to start');
    await env.agent.interrupt(sessionId, 'stop');
    expect(await env.agent.waitForTurn(sessionId, turnId)).toMatchObject({ outcome: 'interrupted' });
    // Before, the confirmation wait rejected at once and the turn ended with the sibling's activity still being
    // cancelled: it ended after the turn did.
    const sibling = runsOf(sessionId)[0]!;
    expect(sibling).toMatchObject({ tool: 'sleepy', aborted: true });
    const ended = (await collectEvents(env.agent, sessionId, turnCompleted(turnId))).find((e) => e.event.type === 'turn_completed')!.event;
    expect(sibling.end!).toBeLessThanOrEqual(Date.parse(ended.at) + 50);
    expect(runsOf(sessionId).some((r) => r.tool === 'wipe')).toBe(false);
  });

  it('an interrupt keeps the calls that ran: the next turn\'s model sees the write that finished, and the calls that did not finish marked so', async () => {
    const sessionId = uniqueId('s');
    env.model.script(
      [
        { respond: { kind: 'tool_calls', calls: [{ id: 'call_note', name: 'local_note', arguments: { text: 'sync at 10' } }] } },
        {
          match: { hasToolResults: true },
          respond: {
            kind: 'tool_calls',
            calls: [
              { id: 'call_wipe', name: 'local_wipe', arguments: { confirmText: 'all' } },
              { id: 'call_note2', name: 'local_note', arguments: { text: 'and lunch' } },
              { id: 'call_sleep', name: 'local_sleepy', arguments: { ms: 20_000, label: 'long' } },
            ],
          },
        },
        { match: { lastUserMessage: 'what did you do?' }, respond: { kind: 'text', text: 'I stored two notes.' } },
      ],
      { lane: sessionId },
    );
    const { turnId } = await env.agent.send(sessionOptions(sessionId), { text: 'note the sync, and lunch, and wipe, and wait' });
    await pendingCall(sessionId);
    await eventually(() => runsOf(sessionId).filter((r) => r.tool === 'note').length === 2 && runsOf(sessionId).some((r) => r.tool === 'sleepy'), 'both notes stored and the sleeper running');
    await env.agent.interrupt(sessionId, 'stop');
    expect(await env.agent.waitForTurn(sessionId, turnId)).toMatchObject({ outcome: 'interrupted' });
    await env.agent.ask(sessionOptions(sessionId), { text: 'what did you do?' });

    const body = env.model.requestsFor(sessionId).at(-1)!.body as ChatRequest;
    const turn = (body.messages as Array<{ role: string; content?: unknown; tool_call_id?: string; tool_calls?: Array<{ id: string }> }>).slice(1);
    const shape = turn.map((m) => (m.role === 'tool' ? `tool ${m.tool_call_id}: ${String(m.content).slice(0, 40)}` : m.tool_calls ? `calls ${m.tool_calls.map((c) => c.id).join(',')}` : `${m.role}: ${String(m.content)}`));
    // Before, the interrupted turn kept only its text: the model never saw the two notes, and stored them again.
    expect(shape).toEqual([
      'user: note the sync, and lunch, and wipe, and wait',
      'calls call_note',
      expect.stringMatching(/^tool call_note: .*sync at 10/),
      'calls call_wipe,call_note2,call_sleep',
      'tool call_wipe: [runtime check] The turn was interrupted',
      expect.stringMatching(/^tool call_note2: .*and lunch/),
      'tool call_sleep: [runtime check] The turn was interrupted',
      'assistant: [interrupted: stop]',
      'user: what did you do?',
    ]);
    expect(runsOf(sessionId).some((r) => r.tool === 'wipe')).toBe(false);
  });

  it('a new message interrupts the running turn by default, and queues behind it when the policy says so', async () => {
    const interrupting = uniqueId('s');
    env.model.script(
      [
        { respond: { kind: 'hang' } },
        { match: { lastUserMessage: 'second' }, respond: { kind: 'text', text: 'second answer' } },
      ],
      { lane: interrupting },
    );
    const first = await env.agent.send(sessionOptions(interrupting), { text: 'first' });
    await env.model.waitForRequests(1, { lane: interrupting });
    const second = await env.agent.sendTo(interrupting, { text: 'second' });
    expect(await env.agent.waitForTurn(interrupting, first.turnId)).toMatchObject({ outcome: 'interrupted' });
    expect(await env.agent.waitForTurn(interrupting, second.turnId)).toMatchObject({ outcome: 'completed', text: 'second answer' });

    const queueing = uniqueId('s');
    env.model.script(
      [
        { respond: { kind: 'text', text: 'first answer', chunkSize: 2, delayMs: 40 } },
        { match: { lastUserMessage: 'second' }, respond: { kind: 'text', text: 'second answer' } },
      ],
      { lane: queueing },
    );
    const q1 = await env.agent.send(sessionOptions(queueing, { busyPolicy: 'queue' }), { text: 'first' });
    await env.model.waitForRequests(1, { lane: queueing });
    const q2 = await env.agent.sendTo(queueing, { text: 'second' });
    expect(await env.agent.waitForTurn(queueing, q1.turnId)).toMatchObject({ outcome: 'completed', text: 'first answer' });
    expect(await env.agent.waitForTurn(queueing, q2.turnId)).toMatchObject({ outcome: 'completed', text: 'second answer' });
  });
});
