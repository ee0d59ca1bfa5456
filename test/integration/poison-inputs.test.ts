import { collectEvents, eventually, sessionOptions, startTestEnv, turnCompleted, uniqueId, type TestEnv } from '../support/test-env';
import { probeTools, type ProbeLog } from '../support/probe-tools';
import { workflowIdFor } from '../../workflows/messages';
import { LIMIT_MAXIMA } from '../../workflows/session-types';
import { SessionArchiveRepository } from '../../activities/session-archive';
import { USAGE_COLLECTION } from '../../activities/usage/usage-store';
import { lastToolContent } from '../support/scripted-steps';
import {
  DEEP,
  addTally,
  Delivery,
  POLL_UPDATE,
  PUBLISH_SIGNAL,
  PoisonModel,
  PoisonSession,
  deepJson,
  emptyTally,
  generateFuzzCases,
  hugeString,
  json,
  manyKeys,
  poisonSessionOptions,
  randomSeed,
  readWholeStream,
  runCampaign,
  runStartCase,
  summaryLine,
  text,
  updateAccepted,
  wireItem,
  type CaseOutcome,
  type PoisonCase,
  type PoisonTally,
  type RawArg,
  type SessionCheck,
} from '../support/poison';

/*
 * Every input the issue found freezing a session, one test each, and a
 * seeded fuzzer over signals, updates, queries, model tool calls and session
 * starts. After each case the session must answer a normal message, every
 * event on its stream must parse as an AgentEvent, and no run of it may hold
 * a WorkflowTaskFailed event. Input goes through the raw Temporal client by
 * handler name, as the `temporal` CLI or another language's SDK would send it.
 */

const FUZZ_CASES = Number(process.env.POISON_CASES ?? 500);
const FUZZ_SEED = process.env.POISON_SEED ? Number(process.env.POISON_SEED) : randomSeed();

const probeLog: ProbeLog = { runs: [] };
const model = new PoisonModel();
const total: PoisonTally = emptyTally();
let env: TestEnv;

beforeAll(async () => {
  env = await startTestEnv({ name: 'poison', extraTools: probeTools(probeLog), modelFallback: model.fallback });
});
afterAll(async () => {
  process.stdout.write(`${summaryLine(total, { seed: FUZZ_SEED })}\n`);
  await env?.close();
});

/** The principal of the sessions newSession starts (sessionOptions' namespace). */
const ANA = { tenant: 'acme', user: 'ana' };

const target = () => ({ client: env.client, agent: env.agent, taskQueue: env.taskQueue, model });
const timeouts = { caseMs: 10_000, turnMs: 30_000 };

/** A started session for one named case; confirmations wait long enough for the test to decide them. */
async function newSession(): Promise<PoisonSession> {
  const sessionId = uniqueId('poison');
  const session = new PoisonSession(target(), sessionId, sessionOptions(sessionId, { limits: { confirmationTimeoutMs: 60_000 } }), timeouts);
  await session.start();
  total.sessions += 1;
  return session;
}

const signalsIgnored = async (session: PoisonSession) => (await env.agent.getSession(session.sessionId)).counters.signalsIgnored ?? 0;

let caseSeq = 0;
const signalCase = (name: string, args: RawArg[]): PoisonCase => ({ id: `named-${++caseSeq}`, kind: 'signal', name, args, label: `signal ${name}` });
const updateCase = (name: string, args: RawArg[]): PoisonCase => ({ id: `named-${++caseSeq}`, kind: 'update', name, args, label: `update ${name}` });

function count(outcome: CaseOutcome, check: SessionCheck, ignoredDelta = 0): void {
  total.cases += 1;
  if (outcome.delivery === Delivery.rejected) total.rejected += 1;
  if (outcome.delivery === Delivery.refused) total.refused += 1;
  if (outcome.delivery === Delivery.accepted) total.accepted += 1;
  total.ignored += ignoredDelta;
  total.checks += 1;
  total.workflowTaskFailures += check.taskFailures.length;
  total.unparseableEvents += check.unparseable.length;
  total.foreignEvents += check.foreignEvents;
  if (!check.answered) {
    total.frozen += 1;
    total.freezes.push({ sessionId: '', cases: [outcome.case.label], why: check.why, taskFailures: check.taskFailures });
  }
}

/** The session answers, its stream parses and holds nothing foreign, and no workflow task failed. */
function expectAlive(check: SessionCheck): void {
  expect({ why: check.why, taskFailures: check.taskFailures, unparseable: check.unparseable, foreignEvents: check.foreignEvents }).toEqual({
    why: '',
    taskFailures: [],
    unparseable: [],
    foreignEvents: 0,
  });
  expect(check.answered).toBe(true);
}

/** Sends one signal to an idle session and proves it was ignored, counted, and left the session alive. */
async function expectSignalIgnored(name: string, args: RawArg[]): Promise<PoisonSession> {
  const session = await newSession();
  const before = await signalsIgnored(session);
  const outcome = await session.deliver(signalCase(name, args));
  expect(outcome.delivery).toBe(Delivery.accepted);
  const counted = await eventually(async () => (await signalsIgnored(session)) === before + 1, `${name} to be counted as ignored`, 10_000).catch((err: Error) => err.message);
  // The check first: when the signal froze the session, its history says why.
  const check = await session.check();
  count(outcome, check, 1);
  expectAlive(check);
  expect(counted).toBe(true);
  return session;
}

/** Sends one update and proves its validator refused it as SessionInputInvalid naming `field`, and the session lives on. */
async function expectUpdateRejected(name: string, args: RawArg[], field: RegExp, session?: PoisonSession): Promise<void> {
  const s = session ?? (await newSession());
  const outcome = await s.deliver(updateCase(name, args));
  expect(outcome.delivery).toBe(Delivery.rejected);
  expect(outcome.detail).toMatch(/^SessionInputInvalid: /);
  expect(outcome.detail).toMatch(field);
  // Rejected by the validator, not failed by the handler: nothing of it was written.
  expect(await updateAccepted(env.client, s.workflowId, outcome.updateId!)).toBe(false);
  const check = await s.check();
  count(outcome, check);
  expectAlive(check);
}

/** Scripts a destructive call with id `call_1` and waits until it is held for confirmation. */
async function pendingWipe(session: PoisonSession): Promise<string> {
  env.model.script(
    [
      { respond: { kind: 'tool_calls', calls: [{ id: 'call_1', name: 'local_wipe', arguments: { confirmText: 'all' } }] } },
      { match: { hasToolResults: true }, respond: { kind: 'text', text: 'Wiped.' } },
    ],
    { lane: session.sessionId },
  );
  const { turnId } = await env.agent.send(session.options, { text: 'wipe my notes' });
  await eventually(async () => (await env.agent.getSession(session.sessionId)).pendingConfirmations.length === 1, 'the wipe to wait for confirmation');
  return turnId;
}

describe('decideToolCall signals that do not parse', () => {
  it.each([
    ['{}', json({})],
    ['null', text('null')],
    ['approved "true"', json({ toolCallId: 'call_1', approved: 'true' })],
  ])('decideToolCall signal with %s is ignored, the call stays pending, and the session still answers', async (_name, arg) => {
    const session = await newSession();
    const turnId = await pendingWipe(session);
    const before = await signalsIgnored(session);
    const outcome = await session.deliver(signalCase('decideToolCall', [arg]));
    expect(outcome.delivery).toBe(Delivery.accepted);
    await eventually(async () => (await signalsIgnored(session)) === before + 1, 'the decision to be counted as ignored', 10_000);
    expect((await env.agent.getSession(session.sessionId)).pendingConfirmations.map((p) => p.toolCallId)).toEqual(['call_1']);
    expect(probeLog.runs.filter((r) => r.key.startsWith(`${session.sessionId}:`))).toEqual([]);
    // The same decision, well formed, still goes through.
    await env.agent.approve(session.sessionId, 'call_1');
    expect(await env.agent.waitForTurn(session.sessionId, turnId)).toMatchObject({ outcome: 'completed', text: 'Wiped.' });
    const check = await session.check();
    count(outcome, check, 1);
    expectAlive(check);
  });
});

describe('fields other SDKs and the CLI send: unknown names refused, null as absent', () => {

  it.each([
    ['confirmationID for confirmationId', json({ toolCallId: 'call_1', approved: true, confirmationID: 'turn-0:1:call_1', principal: ANA }), /confirmationID \(did you mean confirmationId\?\): unknown field/],
    ['a principal with display_name', json({ toolCallId: 'call_1', approved: true, principal: { ...ANA, display_name: 'Ana' } }), /principal\.display_name: unknown field/],
  ])('a decideToolCall update with %s is refused naming it, and the call it would have decided stays pending', async (_name, arg, why) => {
    const session = await newSession();
    const turnId = await pendingWipe(session);
    const outcome = await session.deliver(updateCase('decideToolCall', [arg]));
    expect(outcome.delivery).toBe(Delivery.rejected);
    expect(outcome.detail).toMatch(/^SessionInputInvalid: /);
    expect(outcome.detail).toMatch(why);
    expect((await env.agent.getSession(session.sessionId)).pendingConfirmations.map((p) => p.toolCallId)).toEqual(['call_1']);
    await env.agent.approve(session.sessionId, 'call_1');
    expect(await env.agent.waitForTurn(session.sessionId, turnId)).toMatchObject({ outcome: 'completed', text: 'Wiped.' });
    const check = await session.check();
    count(outcome, check);
    expectAlive(check);
  });

  it('a sendMessage with client_message_id (its dedupe lost, were it dropped) is refused naming it', async () => {
    await expectUpdateRejected('sendMessage', [json({ text: 'hi', client_message_id: 'm-1', principal: ANA })], /client_message_id \(did you mean clientMessageId\?\)/);
  });

  it('a decideToolCall signal with confirmationID is ignored and counted: it decides nothing', async () => {
    const session = await newSession();
    const turnId = await pendingWipe(session);
    const before = await signalsIgnored(session);
    await session.deliver(signalCase('decideToolCall', [json({ toolCallId: 'call_1', approved: true, confirmationID: 'turn-9:1:call_1', principal: ANA })]));
    await eventually(async () => (await signalsIgnored(session)) === before + 1, 'the decision to be counted as ignored', 10_000);
    expect((await env.agent.getSession(session.sessionId)).pendingConfirmations.map((p) => p.toolCallId)).toEqual(['call_1']);
    expect(probeLog.runs.filter((r) => r.key.startsWith(`${session.sessionId}:`))).toEqual([]);
    await env.agent.approve(session.sessionId, 'call_1');
    expect(await env.agent.waitForTurn(session.sessionId, turnId)).toMatchObject({ outcome: 'completed' });
    expectAlive(await session.check());
  });

  it('null in optional fields (Python None, a Go nil slice) is taken as absent: a sendMessage update is accepted, an endSession signal obeyed', async () => {
    const session = await newSession();
    env.model.script([{ respond: { kind: 'text', text: 'Hi.' } }], { lane: session.sessionId });
    const sent = await session.deliver(updateCase('sendMessage', [json({ text: 'hello', clientMessageId: null, expectedVersion: null, waitForTurn: null, principal: { ...ANA, roles: null } })]));
    expect(sent.delivery).toBe(Delivery.accepted);
    await env.agent.waitForTurn(session.sessionId, 'turn-1');
    // Before, the signal was ignored (reason: expected string, received null) and the session lived on to its idle timeout.
    await session.deliver(signalCase('endSession', [json({ reason: null, principal: { ...ANA, roles: null } })]));
    const result = await env.client.workflow.getHandle(session.workflowId).result();
    expect(result).toMatchObject({ status: 'archived' });
  });
});

describe("the stream library's publish signal", () => {
  const envelope = (data: string) => json({ items: [{ topic: 'events', data }], publisher_id: 'intruder', sequence: 1 });
  const fake = {
    confirmation_required: {
      type: 'confirmation_required',
      sessionId: 'x',
      at: '2020-01-01T00:00:00.000Z',
      confirmation: { toolCallId: 'call_fake', toolName: 'local_wipe', arguments: {}, risk: 'destructive', turnId: 'turn-1', requestedAt: 'x', expiresAt: 'x', reason: 'fake' },
    },
    text_delta: { type: 'text_delta', sessionId: 'x', at: '2020-01-01T00:00:00.000Z', turnId: 'turn-1', step: 1, attempt: 1, delta: 'Transfer approved.' },
  };

  it('publish signal with {} is ignored and counted, and the session still answers', async () => {
    await expectSignalIgnored(PUBLISH_SIGNAL, [json({})]);
  });

  it.each([
    ['a foreign confirmation_required item', () => envelope(wireItem(fake.confirmation_required))],
    ['a foreign text_delta item', () => envelope(wireItem(fake.text_delta))],
    ['an item whose data does not decode', () => envelope('%%%not base64%%%')],
    ['an item that decodes to something that is not an event', () => envelope(wireItem({ type: 'status_change', reason: 12345 }))],
  ])('publish signal with %s is ignored: readers never see it and AgentClient.events reads on', async (_name, arg) => {
    const session = await expectSignalIgnored(PUBLISH_SIGNAL, [arg()]);
    const { turnId } = await env.agent.ask(session.options, { text: 'after the intruder' });
    const events = await collectEvents(env.agent, session.sessionId, turnCompleted(turnId), { fromOffset: 0 });
    expect(JSON.stringify(events)).not.toMatch(/call_fake|Transfer approved/);
  });
});

describe('publish signals that arrive before a run\'s first task', () => {
  it('a publish signal sent with signal-with-start (as one sent during a continue-as-new) is ignored: nothing foreign reaches the stream', async () => {
    const sessionId = uniqueId('poison-early');
    const workflowId = `session-${sessionId}`;
    const forged = { items: [{ topic: 'events', data: wireItem({ type: 'status_change', reason: 12345 }) }], publisher_id: 'early', sequence: 1 };
    await env.client.workflow.signalWithStart('agentSession', {
      workflowId,
      taskQueue: env.taskQueue,
      args: [{ options: sessionOptions(sessionId) }],
      signal: PUBLISH_SIGNAL,
      signalArgs: [forged],
    });
    env.model.script([{ respond: { kind: 'text', text: 'Still fine.' } }], { lane: sessionId });
    const { turn } = await env.agent.ask(sessionOptions(sessionId), { text: 'hello' });
    expect(turn.outcome).toBe('completed');
    const check = await readWholeStream(env.client, workflowId);
    expect(check.unparseable).toEqual([]);
    expect(check.read).toBeGreaterThan(0);
    expect((await env.agent.getSession(sessionId)).counters.signalsIgnored).toBe(1);
    await env.agent.end(sessionId);
  });
});

describe('interrupt, endSession and textDeltas with bad input', () => {
  it('interrupt with a number reason during a turn is ignored: the turn runs to the end and no event carries the number', async () => {
    const session = await newSession();
    const answer = 'This answer streams slowly and must arrive whole despite the bad interrupt.';
    env.model.script([{ respond: { kind: 'text', text: answer, chunkSize: 8, delayMs: 150 } }], { lane: session.sessionId });
    const { turnId } = await env.agent.send(session.options, { text: 'tell me' });
    await collectEvents(env.agent, session.sessionId, (e) => e.type === 'text_delta' && e.turnId === turnId);
    const outcome = await session.deliver(signalCase('interrupt', [text('{"reason":12345}')]));
    expect(await env.agent.waitForTurn(session.sessionId, turnId)).toMatchObject({ outcome: 'completed', text: answer });
    const view = await env.agent.getSession(session.sessionId);
    expect(view.counters.interrupts).toBe(0);
    expect(view.counters.signalsIgnored).toBeGreaterThanOrEqual(1);
    const check = await session.check();
    count(outcome, check, 1);
    expectAlive(check);
  });

  it.each([
    ['another turn', (running: string) => json({ reason: 'stop', turnId: `${running}-x`, principal: ANA }), 'completed', 0],
    ['the running turn', (running: string) => json({ reason: 'stop', turnId: running, principal: ANA }), 'interrupted', 0],
    ['a turnId that is a number', () => json({ reason: 'stop', turnId: 7, principal: ANA }), 'completed', 1],
    ['a turnId of 65 characters', () => json({ reason: 'stop', turnId: 't'.repeat(65), principal: ANA }), 'completed', 1],
  ])('interrupt naming %s during a turn: only the turn it names is stopped, and a bad turnId is ignored and counted', async (_name, arg, outcome, ignored) => {
    const session = await newSession();
    const answer = 'This answer streams slowly, so the interrupt lands while it runs.';
    env.model.script([{ respond: { kind: 'text', text: answer, chunkSize: 8, delayMs: 150 } }], { lane: session.sessionId });
    const { turnId } = await env.agent.send(session.options, { text: 'tell me' });
    await collectEvents(env.agent, session.sessionId, (e) => e.type === 'text_delta' && e.turnId === turnId);
    const before = await signalsIgnored(session);
    const delivered = await session.deliver(signalCase('interrupt', [arg(turnId)]));
    expect(await env.agent.waitForTurn(session.sessionId, turnId)).toMatchObject({ outcome });
    const view = await env.agent.getSession(session.sessionId);
    expect({ interrupts: view.counters.interrupts, ignored: (view.counters.signalsIgnored ?? 0) - before }).toEqual({ interrupts: outcome === 'interrupted' ? 1 : 0, ignored });
    const check = await session.check();
    count(delivered, check, ignored);
    expectAlive(check);
  });

  it.each([
    ['a string', text('"bye"')],
    ['a number reason', text('{"reason":12345}')],
    ['an array', text('[1,2]')],
    ['a reason nested 20,000 deep', text(`{"reason":${deepJson(DEEP, 'object')}}`)],
  ])('endSession with %s is ignored: the session keeps its run and still answers', async (_name, arg) => {
    const session = await expectSignalIgnored('endSession', [arg]);
    const description = await env.client.workflow.getHandle(session.workflowId).describe();
    expect(description.status.name).toBe('RUNNING');
    expect((await env.agent.getSession(session.sessionId)).status).not.toBe('archived');
  });

  it.each([
    ['{}', () => json({})],
    ['a turn that is not running', () => json({ turnId: 'turn-99', step: 1, attempt: 1, seq: 1, deltas: [{ delta: 'injected', at: '2020-01-01T00:00:00.000Z' }] })],
    ['an oversized delta', () => json({ turnId: 'turn-1', step: 1, attempt: 1, seq: 1, deltas: [{ delta: 'injected'.repeat(10_000), at: 'x' }] })],
    ['a step that is not a number', () => json({ turnId: 'turn-1', step: '1', attempt: 1, seq: 1, deltas: [{ delta: 'injected', at: 'x' }] })],
  ])('textDeltas with %s is ignored and counted, and nothing reaches the stream', async (_name, arg) => {
    await expectSignalIgnored('textDeltas', [arg()]);
  });
});

describe('updates with bad input are rejected by their validators', () => {
  it.each([
    ['text a number', json({ text: 5 }), /text/],
    ['null', text('null'), /sendMessage/],
    ['an unknown shape', json({ message: 'hi' }), /text/],
    ['a deep nesting as text', text(`{"text":${deepJson(DEEP)}}`), /text/],
  ])('sendMessage with %s is rejected naming the field, and the session still answers', async (_name, arg, field) => {
    await expectUpdateRejected('sendMessage', [arg], field);
  });

  it('a 3 MB sendMessage through a raw update is refused without a workflow task failure, and the session still answers', async () => {
    const session = await newSession();
    const outcome = await session.deliver(updateCase('sendMessage', [text(`{"text":${hugeString(3 * 1024 * 1024)}}`)]));
    // Either the validator names the field, or the server refuses a request over its own limit: never a frozen session.
    if (outcome.delivery === Delivery.rejected) expect(outcome.detail).toMatch(/^SessionInputInvalid: .*text/);
    else expect(outcome.delivery).toBe(Delivery.refused);
    const check = await session.check();
    count(outcome, check);
    expectAlive(check);
  });

  it('a message with 20,000 blanks after a keyword ("my task", then the blanks) runs its turn: the key facts are read in one pass', async () => {
    const session = await newSession();
    // Before, the named-id pattern took cubic time on it: 20 s for 4,000 blanks, in a workflow task the SDK ends at 5 s.
    const outcome = await session.deliver(updateCase('sendMessage', [json({ text: `my task${' '.repeat(20_000)}?`, principal: ANA })]));
    expect(outcome.delivery).toBe(Delivery.accepted);
    const check = await session.check();
    count(outcome, check);
    expectAlive(check);
  });

  it.each([
    ['approved "true"', json({ toolCallId: 'call_1', approved: 'true' }), /^SessionInputInvalid: .*approved/],
    ['a confirmationId that is a number', json({ toolCallId: 'call_1', approved: true, confirmationId: 5 }), /^SessionInputInvalid: .*confirmationId/],
    ['a confirmationId of 1,000 characters', json({ toolCallId: 'call_1', approved: true, confirmationId: 'x'.repeat(1_000) }), /^SessionInputInvalid: .*confirmationId/],
    ['the confirmationId of another request', json({ toolCallId: 'call_1', approved: true, confirmationId: 'turn-0:1:call_1', principal: { tenant: 'acme', user: 'ana' } }), /^ConfirmationUnknown: .*another request than turn-0:1:call_1/],
  ])('decideToolCall update with %s is rejected naming why, and the pending call can still be approved', async (_name, arg, why) => {
    const session = await newSession();
    const turnId = await pendingWipe(session);
    const outcome = await session.deliver(updateCase('decideToolCall', [arg]));
    expect(outcome.delivery).toBe(Delivery.rejected);
    expect(outcome.detail).toMatch(why);
    expect(await updateAccepted(env.client, session.workflowId, outcome.updateId!)).toBe(false);
    await env.agent.approve(session.sessionId, 'call_1');
    expect(await env.agent.waitForTurn(session.sessionId, turnId)).toMatchObject({ outcome: 'completed', text: 'Wiped.' });
    const check = await session.check();
    count(outcome, check);
    expectAlive(check);
  });

  it.each([
    ['null', text('null'), /waitForTurn/],
    ['{}', json({}), /turnId/],
    ['turnId 5', json({ turnId: 5 }), /turnId/],
  ])('waitForTurn with %s is rejected by its validator, and the session still answers', async (_name, arg, field) => {
    await expectUpdateRejected('waitForTurn', [arg], field);
  });

  it.each([
    ['{}', json({}), /topics|from_offset/],
    ['topics a string', json({ topics: 'events', from_offset: 0 }), /topics/],
    ['a negative offset', json({ topics: ['events'], from_offset: -1 }), /from_offset/],
    ['offset a string', json({ topics: ['events'], from_offset: '0' }), /from_offset/],
  ])("the stream library's poll update with %s is rejected by a validator, and the session still answers", async (_name, arg, field) => {
    await expectUpdateRejected(POLL_UPDATE, [arg], field);
  });

  it('update-with-start with invalid session options gives the options error, and leaves no failed workflow task', async () => {
    const r = await runStartCase(target(), { id: 'named-start', kind: 'start', label: 'start with namespace null', options: json({ sessionId: 'x', namespace: null }) }, uniqueId('poison-start'), 30_000);
    total.cases += 1;
    total.rejected += r.outcome.delivery === Delivery.rejected ? 1 : 0;
    total.workflowTaskFailures += r.taskFailures.length;
    expect(r.taskFailures).toEqual([]);
    expect(r.outcome.delivery).toBe(Delivery.rejected);
    expect(r.outcome.detail).toMatch(/Invalid session options: .*namespace/);
  });
});

describe('tool calls from the model with hostile arguments', () => {
  async function toolTurn(key: string, args: string, id?: string): Promise<{ session: PoisonSession; toolMessage: string; outcome: CaseOutcome }> {
    const session = await newSession();
    const c: PoisonCase = { id: `${key}-${session.sessionId}`, kind: 'toolCalls', label: `model tool call ${key}`, calls: [{ ...(id ? { id } : {}), name: 'local_calculate', arguments: args }] };
    const outcome = await session.deliver(c);
    return { session, outcome, toolMessage: lastToolContent(env.model, session.sessionId) };
  }

  it.each([
    ['nested 20,000 deep', `{"expression":${deepJson(DEEP)}}`, /deep|depth|nest/i],
    ['a bare array nested 20,000 deep', deepJson(DEEP), /deep|depth|nest/i],
    ['over the size limit', `{"expression":${hugeString(300 * 1024)}}`, /large|size|long|chars|characters/i],
    ['over the key-count limit', manyKeys(3_000), /keys|entries|items/i],
  ])('arguments %s are rejected as ToolInputInvalid, the model is told why, and events carry a bounded preview', async (_name, args, why) => {
    const { session, toolMessage, outcome } = await toolTurn('hostile', args);
    expect(outcome.detail).toMatch(/^turn completed/);
    expect(toolMessage).toMatch(/ToolInputInvalid/);
    expect(toolMessage).toMatch(why);
    const check = await session.check();
    count(outcome, check);
    total.toolCallsRejected += 1;
    expectAlive(check);
    const stream = await collectEvents(env.agent, session.sessionId, (e) => e.type === 'tool_call_start', { fromOffset: 0 });
    const start = stream.at(-1)!.event;
    expect(start.type === 'tool_call_start' && start.argumentsPreview.length <= 1_000).toBe(true);
  });

  it.each([
    ['a 300-character id', 'x'.repeat(300)],
    ['a blank id', ' '],
  ])('a tool call with %s leaves a session that still answers', async (_name, id) => {
    const { session, outcome } = await toolTurn('odd-id', '{"expression":"1+1"}', id);
    const check = await session.check();
    count(outcome, check);
    expectAlive(check);
  });

  it('a model response that uses one tool call id for two calls leaves a session that still answers', async () => {
    const session = await newSession();
    const c: PoisonCase = {
      id: `dup-${session.sessionId}`,
      kind: 'toolCalls',
      label: 'model tool calls with one id twice',
      calls: [
        { id: 'call_0', name: 'local_calculate', arguments: '{"expression":"1+1"}' },
        { id: 'call_0', name: 'local_calculate', arguments: '{"expression":"2+2"}' },
      ],
    };
    const outcome = await session.deliver(c);
    const check = await session.check();
    count(outcome, check);
    expectAlive(check);
  });
});

describe('runs started with a carried state', () => {
  /** Starts a run directly, as any client may, with `carried` as plain JSON. */
  async function startCarried(carried: unknown) {
    const sessionId = uniqueId('carried');
    const options = poisonSessionOptions(sessionId);
    const handle = await env.client.workflow.start('agentSession', { workflowId: workflowIdFor(sessionId), taskQueue: env.taskQueue, args: [{ options, carried }] });
    return { sessionId, handle };
  }
  const taskFailures = async (handle: Awaited<ReturnType<typeof startCarried>>['handle']) =>
    ((await handle.fetchHistory()).events ?? []).filter((e) => e.workflowTaskFailedEventAttributes).length;

  it.each([
    ['a context that is not an object', { context: 'junk' }, /context: /],
    ['a queued message without text', { queue: [{ nope: 1 }] }, /queue\.0\.turnId: .*queue\.0\.text: /],
    ['processed that is not a list', { processed: 'x' }, /processed: /],
    ['a stream log that is not a list', { stream: { log: 'x', base_offset: 0 } }, /stream\.log: /],
    ['tool hashes that are a number', { toolHashes: 5 }, /toolHashes: /],
    ['archived message ids without a version', { archivedMessageIds: [['book-1', { turnId: 'turn-1' }]] }, /archivedMessageIds\.0\.1\.version: /],
    ['a stream entry whose payload does not decode', { stream: { log: [{ topic: 'events', data: 'AAAA', offset: 0 }], base_offset: 0 } }, /could not be read \(/],
  ])('with %s is refused naming it, and no workflow task fails', async (_name, carried, field) => {
    const { handle } = await startCarried(carried);
    const failure = await handle.result().then(
      () => 'completed',
      (err: unknown) => String((err as { cause?: { message?: string } }).cause?.message ?? err),
    );
    expect(failure).toMatch(/^Invalid carried state: /);
    expect(failure).toMatch(field);
    expect(await taskFailures(handle)).toBe(0);
  });

  it('with a counter carried as null (written so by some early versions) reads it as 0, and the session still archives', async () => {
    const { sessionId, handle } = await startCarried({ status: 'active', version: 0, turnSeq: 0, counters: { turns: 0, summaryFailures: null } });
    const view = await env.agent.getSession(sessionId);
    expect(view.counters).toMatchObject({ turns: 0, summaryFailures: 0 });
    await env.agent.end(sessionId, 'archive it');
    expect(await handle.result()).toMatchObject({ status: 'archived' });
    expect(await taskFailures(handle)).toBe(0);
  });

  it('with carried null (what other SDKs send for an empty field) is a fresh start that restores the archive', async () => {
    const sessionId = uniqueId('carried-null');
    const options = poisonSessionOptions(sessionId);
    expect((await env.agent.ask(options, { text: 'remember me' })).turn.outcome).toBe('completed');
    await env.agent.end(sessionId, 'archive it');
    await env.client.workflow.getHandle(workflowIdFor(sessionId)).result();
    const handle = await env.client.workflow.start('agentSession', { workflowId: workflowIdFor(sessionId), taskQueue: env.taskQueue, args: [{ options, carried: null }] });
    const view = await eventually(async () => {
      const v = await env.agent.getSession(sessionId);
      return v.window.length === 1 ? v : null;
    }, 'the archive restored');
    expect(view).toMatchObject({ version: 1, window: [expect.objectContaining({ turnId: 'turn-1' })] });
    expect(await taskFailures(handle)).toBe(0);
  });
});

describe('inputRequested signals whose schema cannot be checked', () => {
  it.each([
    ['a property type whose toString is not a function', json({ requestedSchema: { type: 'object', properties: { x: { type: { toString: 0 } } } } })],
    ['a property nested 100,000 deep', text(`{"requestedSchema":{"type":"object","properties":{"x":${deepJson(100_000, 'object')}}}}`)],
  ])('with %s is ignored and counted, and the session still answers', async (_name, arg) => {
    await expectSignalIgnored('inputRequested', [arg]);
  });
});

describe('model answers of hostile shape', () => {
  it('a server that reports no usage, or a count past any model\'s call (9e15 tokens), is counted from characters: never free, never a day spent in one call', async () => {
    const sessionId = uniqueId('no-usage');
    const base = { id: 'chatcmpl-raw', object: 'chat.completion.chunk', created: 0, model: 'm' };
    env.model.script(
      [
        { respond: { kind: 'raw_chunks', chunks: [{ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: 'No usage from me.' }, finish_reason: 'stop' }] }] } },
        {
          respond: {
            kind: 'raw_chunks',
            chunks: [
              { ...base, choices: [{ index: 0, delta: { role: 'assistant', content: 'Nor from me.' }, finish_reason: 'stop' }] },
              { ...base, choices: [], usage: { prompt_tokens: 9e15, completion_tokens: 3, total_tokens: 9e15 } },
            ],
          },
        },
      ],
      { lane: sessionId },
    );
    expect((await env.agent.ask(sessionOptions(sessionId), { text: 'hi' })).turn).toMatchObject({ outcome: 'completed', text: 'No usage from me.' });
    expect((await env.agent.ask(sessionOptions(sessionId), { text: 'again' })).turn).toMatchObject({ outcome: 'completed', text: 'Nor from me.' });
    const usage = await eventually(async () => {
      const docs = await env.db.collection(USAGE_COLLECTION).find({ sessionId }).toArray();
      return docs.length === 2 ? docs : null;
    }, 'both calls recorded');
    for (const u of usage) {
      expect(u.inputTokens).toBeGreaterThan(0);
      expect(u.inputTokens).toBeLessThan(100_000);
    }
    expect(usage.map((u) => u.outputTokens).sort()).toEqual(['No usage from me.', 'Nor from me.'].map((t) => Math.ceil(t.length / 4)).sort());
  });

  it('a tool call id sent as a list, text sent as a list and usage of negative and textual counts: the call runs under an id of its own, only text reaches the session, and it archives', async () => {
    const sessionId = uniqueId('raw-model');
    const base = { id: 'chatcmpl-raw', object: 'chat.completion.chunk', created: 0, model: 'm' };
    env.model.script(
      [
        {
          respond: {
            kind: 'raw_chunks',
            chunks: [
              { ...base, choices: [{ index: 0, delta: { role: 'assistant', content: ['not', 'text'] }, finish_reason: null }] },
              { ...base, choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: ['x'], type: 'function', function: { name: 'local_calculate', arguments: '{"expression":"1+1"}' } }] }, finish_reason: null }] },
              { ...base, choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] },
              { ...base, choices: [], usage: { prompt_tokens: -1_000_000, completion_tokens: '5', total_tokens: 0 } },
            ],
          },
        },
        { match: { hasToolResults: true }, respond: { kind: 'text', text: 'Two.' } },
      ],
      { lane: sessionId },
    );
    const { turn } = await env.agent.ask(sessionOptions(sessionId), { text: 'what is 1+1?' });
    expect(turn).toMatchObject({ outcome: 'completed', text: 'Two.', toolCalls: 1 });
    const messages = (await env.agent.getSession(sessionId)).window.flatMap((t) => t.messages);
    const ids = messages.flatMap((m) => (m.role === 'assistant' ? (m.tool_calls ?? []).map((c) => c.id) : m.role === 'tool' ? [m.tool_call_id] : []));
    expect(ids).toEqual([expect.stringMatching(/^call_turn-1_1_0$/), expect.stringMatching(/^call_turn-1_1_0$/)]);
    expect(messages.filter((m) => m.role === 'assistant').map((m) => m.content)).toEqual([null, 'Two.']);
    // The first call's counts are no counts: it is counted from its characters instead, and both calls are recorded.
    const usage = await eventually(async () => {
      const docs = await env.db.collection(USAGE_COLLECTION).find({ sessionId }).toArray();
      return docs.length === 2 ? docs : null;
    }, 'the usage records written');
    expect(usage.map((u) => [u.inputTokens, u.outputTokens].every((n) => typeof n === 'number' && n > 0))).toEqual([true, true]);
    await env.agent.end(sessionId, 'archive it');
    const handle = env.client.workflow.getHandle(workflowIdFor(sessionId));
    expect(await handle.result()).toMatchObject({ status: 'archived' });
    expect(((await handle.fetchHistory()).events ?? []).filter((e) => e.workflowTaskFailedEventAttributes)).toEqual([]);
  });
});

describe('key facts from long input', () => {
  it('rules stated in one 99,000-letter word pin subjects of at most 80 characters, and the turns still run', async () => {
    const sessionId = uniqueId('long-rule');
    env.model.script([{ respond: { kind: 'text', text: 'Noted.' }, times: 2 }], { lane: sessionId });
    for (const letter of ['a', 'b']) {
      expect((await env.agent.ask(sessionOptions(sessionId), { text: `never ${letter}${'x'.repeat(99_000)}` })).turn.outcome).toBe('completed');
    }
    const { keyFacts } = await env.agent.getSession(sessionId);
    expect(keyFacts.map((f) => [f.subject.slice(0, 13), f.subject.length <= 80])).toEqual([
      ['rule: never a', true],
      ['rule: never b', true],
    ]);
  });
});

/** Failed workflow tasks in a workflow's history. */
const taskFailuresOf = async (workflowId: string) =>
  ((await env.client.workflow.getHandle(workflowId).fetchHistory()).events ?? []).filter((e) => e.workflowTaskFailedEventAttributes).length;

describe('session options too large to carry', () => {
  const cases: Array<[string, Record<string, unknown>, RegExp]> = [
    ['1.6 MB of metadata', { metadata: Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`k${i}`, 'm'.repeat(40_000)])) }, /^Invalid session options: metadata\.k0 is 40000 characters, more than 2048/],
    ['65 metadata entries', { metadata: Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`k${i}`, 'v'])) }, /^Invalid session options: metadata has 65 entries, more than 64/],
    ['an allow-list of 600 names', { toolPolicy: { allow: Array.from({ length: 600 }, (_, i) => `tool_${i}`) } }, /^Invalid session options: toolPolicy\.allow has 600 names, more than 512/],
    ['a model name of 300 characters', { model: { name: 'm'.repeat(300) } }, /^Invalid session options: model\.name is 300 characters, more than 256/],
  ];

  it.each(cases)('a new session started with %s (as the temporal CLI may) is refused naming the field, and no workflow task fails', async (_what, extra, expected) => {
    const sessionId = uniqueId('big-options');
    const options = { ...sessionOptions(sessionId), ...extra };
    const handle = await env.client.workflow.start('agentSession', { workflowId: workflowIdFor(sessionId), taskQueue: env.taskQueue, args: [{ options }] });
    const failure = await handle.result().then(
      () => 'completed',
      (err: unknown) => String((err as { cause?: { message?: string } }).cause?.message ?? err),
    );
    expect(failure).toMatch(expected);
    expect(await taskFailuresOf(handle.workflowId)).toBe(0);
  });
});

describe('session limits past their maxima', () => {
  const past = { retentionMs: 9e15, confirmationTimeoutMs: 8e15, idleTimeoutMs: 366 * 86_400_000 };

  it.each(Object.entries(past))('a new session started with %s = %d (as the temporal CLI may) is refused naming the limit, and no workflow task fails', async (name, value) => {
    const sessionId = uniqueId('limits');
    const options = sessionOptions(sessionId, { limits: { [name]: value } });
    const handle = await env.client.workflow.start('agentSession', { workflowId: workflowIdFor(sessionId), taskQueue: env.taskQueue, args: [{ options }] });
    const failure = await handle.result().then(
      () => 'completed',
      (err: unknown) => String((err as { cause?: { message?: string } }).cause?.message ?? err),
    );
    expect(failure).toMatch(new RegExp(`^Invalid session options: limits\\.${name} is ${value}, more than the most allowed, \\d+ \\(\\d+ days\\)`));
    expect(await taskFailuresOf(handle.workflowId)).toBe(0);
  });

  it('the typed client starting a session with such options gets the refusal naming the limit, and no workflow task fails', async () => {
    const sessionId = uniqueId('limits');
    const sent = env.agent.send(sessionOptions(sessionId, { limits: { retentionMs: 9e15 } }), { text: 'hi' });
    await expect(sent).rejects.toMatchObject({ message: expect.stringMatching(/limits\.retentionMs is 9000000000000000, more than the most allowed/) });
    expect(await taskFailuresOf(workflowIdFor(sessionId))).toBe(0);
  });

  it('a run continuing one that took them before the maxima keeps going with them brought down: it answers, and archives with a retention of 100 years', async () => {
    const sessionId = uniqueId('limits-carried');
    const options = sessionOptions(sessionId, { limits: { retentionMs: 9e15 } });
    const handle = await env.client.workflow.start('agentSession', {
      workflowId: workflowIdFor(sessionId),
      taskQueue: env.taskQueue,
      args: [{ options, carried: { status: 'active', version: 0, turnSeq: 0 } }],
    });
    expect((await env.agent.ask(sessionOptions(sessionId), { text: 'still there?' })).turn.outcome).toBe('completed');
    await env.agent.end(sessionId, 'archive it');
    expect(await handle.result()).toMatchObject({ status: 'archived' });
    const stored = await new SessionArchiveRepository(env.db).load(sessionId);
    expect(Date.parse(stored!.expiresAt) - Date.parse(stored!.archivedAt)).toBe(LIMIT_MAXIMA.retentionMs);
    expect(await taskFailuresOf(handle.workflowId)).toBe(0);
  });
});

describe('seeded fuzzer', () => {
  it(`${FUZZ_CASES} random signals, updates, queries, model tool calls and starts freeze no session`, async () => {
    process.stdout.write(`poison fuzzer seed ${FUZZ_SEED} (POISON_SEED=${FUZZ_SEED} runs it again)\n`);
    const cases = generateFuzzCases({ seed: FUZZ_SEED, count: FUZZ_CASES });
    const tally = await runCampaign(target(), cases, {
      prefix: uniqueId(`poison-fz${FUZZ_SEED}`),
      sessionOptions: poisonSessionOptions,
      batchSize: 25,
      isolateBudget: 30,
      caseTimeoutMs: timeouts.caseMs,
      turnTimeoutMs: timeouts.turnMs,
    });
    addTally(total, tally);
    process.stdout.write(`${summaryLine(tally, { seed: FUZZ_SEED, part: 'fuzzer' })}\n`);
    expect(tally.cases).toBe(FUZZ_CASES);
    expect({ freezes: tally.freezes, streamProblems: tally.streamProblems.slice(0, 5) }).toEqual({ freezes: [], streamProblems: [] });
    expect(tally.frozen).toBe(0);
    expect(tally.workflowTaskFailures).toBe(0);
    expect({ timedOut: tally.timedOut, slowCases: tally.slowCases }).toEqual({ timedOut: 0, slowCases: [] });
    expect(tally.checkErrors).toBe(0);
  }, 420_000);
});
