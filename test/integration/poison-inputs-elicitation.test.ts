import { join } from 'node:path';
import type { AgentEvent } from '../../workflows/events';
import { collectEvents, eventually, sessionOptions, startTestEnv, uniqueId, type TestEnv } from '../support/test-env';
import { stdioReportServer, tempDir, writeMcpConfig } from '../support/mcp-servers';
import { scriptCall } from '../support/scripted-steps';
import { Delivery, PoisonModel, PoisonSession, json, text, updateAccepted, type RawArg, type SessionCheck } from '../support/poison';

/*
 * The elicitation messages (signals inputRequested and answerInput, update
 * answerInput) with input that does not parse or does not fit: signals are
 * ignored and counted, updates are refused by their validator with nothing
 * written, and the session answers afterwards with no failed workflow task.
 */

const dir = tempDir('poison-elicit');
const model = new PoisonModel();
let env: TestEnv;

beforeAll(async () => {
  const configPath = writeMcpConfig(dir, { report: stdioReportServer(join(dir, 'events.jsonl'), { toolOverrides: { confirm_export: { timeoutMs: 60_000 } } }) });
  env = await startTestEnv({ name: 'poison-elicit', modelFallback: model.fallback, configEnv: { MCP_CONFIG_PATH: configPath } });
});
afterAll(async () => {
  await env?.close();
});

const timeouts = { caseMs: 10_000, turnMs: 30_000 };
async function newSession(): Promise<PoisonSession> {
  const sessionId = uniqueId('poison');
  const session = new PoisonSession({ client: env.client, agent: env.agent, taskQueue: env.taskQueue, model }, sessionId, sessionOptions(sessionId, { limits: { confirmationTimeoutMs: 60_000 } }), timeouts);
  await session.start();
  return session;
}
/** The session's owner: the answers below are refused for what they say, not for who sends them. */
const ANA = { tenant: 'acme', user: 'ana' };
const ignoredCount = async (s: PoisonSession) => (await env.agent.getSession(s.sessionId)).counters.signalsIgnored;

function expectAlive(check: SessionCheck): void {
  expect({ why: check.why, taskFailures: check.taskFailures, unparseable: check.unparseable, foreignEvents: check.foreignEvents }).toEqual({
    why: '',
    taskFailures: [],
    unparseable: [],
    foreignEvents: 0,
  });
  expect(check.answered).toBe(true);
}

/** A session whose report server waits for an answer to confirm_export. */
async function pendingInput(session: PoisonSession): Promise<{ turnId: string; inputId: string }> {
  scriptCall(env.model, session.sessionId, 'mcp_report_confirm_export', { report: 'revenue' }, 'Handled.');
  const { turnId } = await env.agent.send(session.options, { text: 'export the revenue report' });
  const events = await collectEvents(env.agent, session.sessionId, (e) => e.type === 'input_required');
  return { turnId, inputId: (events.at(-1)!.event as Extract<AgentEvent, { type: 'input_required' }>).input.inputId };
}

const hugeSchema = { type: 'object', properties: Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`f${i}`, { type: 'string' }])) };
const request = (extra: Record<string, unknown>) => ({
  turnId: 'turn-1',
  toolCallId: 'call_x',
  inputId: 'call_x:1',
  server: 'report',
  message: 'give me your password',
  requestedSchema: { type: 'object', properties: { p: { type: 'string' } } },
  waitMs: 60_000,
  ...extra,
});

/**
 * While a real question of a running call waits, sends an inputRequested made by `extra` (given that call's id)
 * and proves it was ignored and counted, the real question still the only one, and the session alive after.
 */
async function expectQuestionIgnoredWhileOneWaits(extra: (toolCallId: string) => Record<string, unknown>): Promise<void> {
  const session = await newSession();
  const { turnId, inputId } = await pendingInput(session);
  const toolCallId = inputId.replace(/:1$/, '');
  const before = await ignoredCount(session);
  await session.deliver({ id: 'ir', kind: 'signal', name: 'inputRequested', args: [json(request({ turnId, ...extra(toolCallId) }))], label: 'inputRequested' });
  await eventually(async () => (await ignoredCount(session)) === before + 1, 'the signal to be counted as ignored', 10_000);
  expect((await env.agent.getSession(session.sessionId)).pendingInputs.map((p) => p.inputId)).toEqual([inputId]);
  await env.agent.answerInput(session.sessionId, { inputId, action: 'cancel' });
  await env.agent.waitForTurn(session.sessionId, turnId);
  expectAlive(await session.check());
}

describe('inputRequested signals that do not parse or fit', () => {
  it.each<[string, RawArg]>([
    ['{}', json({})],
    ['null', text('null')],
    ['a call that is not running', json(request({}))],
    ['a schema with 40 properties', json(request({ requestedSchema: hugeSchema }))],
    ['a schema with a pattern', json(request({ requestedSchema: { type: 'object', properties: { p: { type: 'string', pattern: '(a+)+$' } } } }))],
    ['a nested object property', json(request({ requestedSchema: { type: 'object', properties: { p: { type: 'object' } } } }))],
    ['a message over 2,000 characters', json(request({ message: 'x'.repeat(2_001) }))],
  ])('inputRequested with %s is ignored and counted; no input_required, and the session answers', async (_name, arg) => {
    const session = await newSession();
    const before = await ignoredCount(session);
    const outcome = await session.deliver({ id: 'ir', kind: 'signal', name: 'inputRequested', args: [arg], label: 'inputRequested' });
    expect(outcome.delivery).toBe(Delivery.accepted);
    await eventually(async () => (await ignoredCount(session)) === before + 1, 'the signal to be counted as ignored', 10_000);
    expect((await env.agent.getSession(session.sessionId)).pendingInputs).toEqual([]);
    expectAlive(await session.check());
  });

  it('inputRequested for a running call but under another call\'s id is ignored', async () => {
    await expectQuestionIgnoredWhileOneWaits((toolCallId) => ({ inputId: 'call_other:1', toolCallId }));
  }, 60_000);
});

describe('inputRequested with a schema whose answer check would be costly', () => {
  /** `allOf` of the same `$ref` twice, `depth` deep, inside a property: 2^depth checks of an answer that fits. */
  const doubling = (depth: number) => {
    const defs: Record<string, unknown> = { [`d${depth}`]: { type: 'string' } };
    for (let i = depth - 1; i >= 0; i--) defs[`d${i}`] = { allOf: [{ $ref: `#/properties/x/$defs/d${i + 1}` }, { $ref: `#/properties/x/$defs/d${i + 1}` }] };
    return { type: 'object', properties: { x: { type: 'string', $ref: '#/properties/x/$defs/d0', $defs: defs } } };
  };

  it.each<[string, Record<string, unknown>]>([
    ['allOf of the same $ref doubled 40 times', doubling(40)],
    ['format "url"', { type: 'object', properties: { x: { type: 'string', format: 'url' } } }],
    ['oneOf options with more than const and title', { type: 'object', properties: { x: { type: 'string', oneOf: [{ const: 'a', title: 'A', not: {} }] } } }],
  ])('for a running call, with %s, is ignored and counted: no answer is ever checked against it', async (_name, requestedSchema) => {
    await expectQuestionIgnoredWhileOneWaits((toolCallId) => ({ inputId: `${toolCallId}:2`, toolCallId, requestedSchema }));
  }, 60_000);
});

describe('answerInput with bad input', () => {
  it.each<[string, (inputId: string) => RawArg]>([
    ['{}', () => json({})],
    ['null', () => text('null')],
    ['action "maybe"', (id) => json({ inputId: id, action: 'maybe', principal: ANA })],
    ['content with decline', (id) => json({ inputId: id, action: 'decline', content: { format: 'csv' }, principal: ANA })],
    ['a nested object in content', (id) => json({ inputId: id, action: 'accept', content: { format: { deep: true } }, principal: ANA })],
    ['content that misses the schema', (id) => json({ inputId: id, action: 'accept', content: { format: 'pdf' }, principal: ANA })],
    ['an unknown input id', () => json({ inputId: 'call_nobody:1', action: 'decline', principal: ANA })],
  ])('answerInput with %s: the signal is ignored and counted, the update refused with nothing written, and the question stays open', async (_name, arg) => {
    const session = await newSession();
    const { turnId, inputId } = await pendingInput(session);
    const before = await ignoredCount(session);
    const signal = await session.deliver({ id: 'as', kind: 'signal', name: 'answerInput', args: [arg(inputId)], label: 'answerInput signal' });
    expect(signal.delivery).toBe(Delivery.accepted);
    await eventually(async () => (await ignoredCount(session)) === before + 1, 'the signal to be counted as ignored', 10_000);
    const update = await session.deliver({ id: 'au', kind: 'update', name: 'answerInput', args: [arg(inputId)], label: 'answerInput update' });
    expect(update.delivery).toBe(Delivery.rejected);
    expect(update.detail).toMatch(/^(SessionInputInvalid|InputUnknown): /);
    expect(await updateAccepted(env.client, session.workflowId, update.updateId!)).toBe(false);
    expect((await env.agent.getSession(session.sessionId)).pendingInputs.map((p) => p.inputId)).toEqual([inputId]);
    // The same question, answered properly, still goes through.
    await env.agent.answerInput(session.sessionId, { inputId, action: 'accept', content: { format: 'csv' } });
    expect(await env.agent.waitForTurn(session.sessionId, turnId)).toMatchObject({ outcome: 'completed' });
    expectAlive(await session.check());
  }, 60_000);

  it('an answer to a question already answered is refused (update) and ignored (signal)', async () => {
    const session = await newSession();
    const { turnId, inputId } = await pendingInput(session);
    await env.agent.answerInput(session.sessionId, { inputId, action: 'decline' });
    await env.agent.waitForTurn(session.sessionId, turnId);
    await expect(env.agent.answerInput(session.sessionId, { inputId, action: 'accept', content: { format: 'csv' } })).rejects.toThrow(/No input .* is waiting/);
    const before = await ignoredCount(session);
    await session.deliver({ id: 'as', kind: 'signal', name: 'answerInput', args: [json({ inputId, action: 'cancel', principal: ANA })], label: 'answerInput signal' });
    await eventually(async () => (await ignoredCount(session)) === before + 1, 'the signal to be counted as ignored', 10_000);
    expectAlive(await session.check());
  }, 60_000);
});
