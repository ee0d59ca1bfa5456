import { collectEvents, sessionOptions, startTestEnv, turnCompleted, uniqueId, type TestEnv } from '../support/test-env';
import { probeTools, type ProbeLog } from '../support/probe-tools';
import type { ChatRequest } from '../../scripted-model';
import { scriptCallCutBeforeArguments } from '../support/scripted-steps';

const log: ProbeLog = { runs: [] };
let env: TestEnv;
beforeAll(async () => {
  env = await startTestEnv({ name: 'tools', extraTools: probeTools(log) });
});
afterAll(async () => {
  await env?.close();
});

const toolMessages = (body: unknown) =>
  ((body as ChatRequest).messages as Array<{ role: string; tool_call_id?: string; content?: unknown }>).filter((m) => m.role === 'tool');

describe('tool calls in the ReAct loop', () => {
  it('runs calls from one response in parallel and returns results in call order, paired by tool_call_id', async () => {
    const sessionId = uniqueId('s');
    env.model.script(
      [
        {
          respond: {
            kind: 'tool_calls',
            text: 'Let me check both.',
            calls: [
              { id: 'call_a', name: 'local_sleepy', arguments: { ms: 800, label: 'a' } },
              { id: 'call_b', name: 'local_sleepy', arguments: { ms: 300, label: 'b' } },
            ],
          },
        },
        { match: { hasToolResults: true }, respond: { kind: 'text', text: 'Both done.' } },
      ],
      { lane: sessionId },
    );
    const { turnId } = await env.agent.send(sessionOptions(sessionId), { text: 'check a and b' });
    const result = await env.agent.waitForTurn(sessionId, turnId);
    expect(result).toMatchObject({ outcome: 'completed', modelCalls: 2, toolCalls: 2 });
    expect(result.text).toBe('Let me check both.\n\nBoth done.');
    const runs = log.runs.filter((r) => r.key.startsWith(`${sessionId}:`));
    expect(runs).toHaveLength(2);
    const [a, b] = [runs.find((r) => (r.args as { label: string }).label === 'a')!, runs.find((r) => (r.args as { label: string }).label === 'b')!];
    // Overlap: each started before the other ended.
    expect(a.start).toBeLessThan(b.end!);
    expect(b.start).toBeLessThan(a.end!);
    expect(a.key).toBe(`${sessionId}:${turnId}:1:call_a`);
    const second = env.model.requestsFor(sessionId)[1]!;
    const results = toolMessages(second.body);
    expect(results.map((m) => m.tool_call_id)).toEqual(['call_a', 'call_b']);
    expect(JSON.parse(String(results[0]!.content))).toEqual({ slept: 800, label: 'a' });
    env.model.assertDone(sessionId);
  });

  it('makes exactly maxSteps model calls at the cap and keeps the text sent alongside tool calls', async () => {
    const sessionId = uniqueId('s');
    env.model.script(
      [{ times: 3, respond: { kind: 'tool_calls', text: 'Still looking.', calls: [{ name: 'local_sleepy', arguments: { ms: 1, label: 'loop' } }] } }],
      { lane: sessionId },
    );
    const { turnId } = await env.agent.send(sessionOptions(sessionId, { limits: { maxSteps: 3 } }), { text: 'loop forever' });
    const events = await collectEvents(env.agent, sessionId, turnCompleted(turnId));
    expect(env.model.requestsFor(sessionId)).toHaveLength(3);
    const done = events.at(-1)!.event;
    expect(done).toMatchObject({ type: 'turn_completed', outcome: 'step_limit' });
    expect(done.type === 'turn_completed' && done.text).toMatch(/^Still looking\.\n\nStill looking\.\n\nStill looking\.\n\nI stopped after 3 model steps/);
    expect(events.some((e) => e.event.type === 'status_change' && /step limit of 3/.test(e.event.reason ?? ''))).toBe(true);
    env.model.assertDone(sessionId);
  });

  it('never offers or runs a tool off the allow-list', async () => {
    const sessionId = uniqueId('s');
    env.model.script(
      [
        { match: { toolsOffered: ['local_note'], toolsNotOffered: ['local_wipe'] }, respond: { kind: 'tool_calls', calls: [{ id: 'call_w', name: 'local_wipe', arguments: { confirmText: 'yes' } }] } },
        { match: { hasToolResults: true }, respond: { kind: 'text', text: 'I cannot do that here.' } },
      ],
      { lane: sessionId },
    );
    const { turnId } = await env.agent.send(sessionOptions(sessionId, { toolPolicy: { allow: ['local_note'] } }), { text: 'wipe everything' });
    await env.agent.waitForTurn(sessionId, turnId);
    expect(log.runs.filter((r) => r.key.startsWith(`${sessionId}:`))).toEqual([]);
    const refusal = JSON.parse(String(toolMessages(env.model.requestsFor(sessionId)[1]!.body)[0]!.content));
    expect(refusal.error.type).toBe('ToolNotAllowed');
    expect(refusal.error.next_step).toMatch(/Do not call it again/);
    env.model.assertDone(sessionId);
  });

  it('never runs a call with invalid arguments and tells the model which field and why', async () => {
    const sessionId = uniqueId('s');
    env.model.script(
      [
        {
          respond: {
            kind: 'tool_calls',
            calls: [
              { id: 'call_bad', name: 'local_sleepy', arguments: { ms: 'soon', label: 'x' } },
            ],
          },
        },
        { respond: { kind: 'malformed_tool_json', name: 'local_sleepy', id: 'call_broken' } },
        { respond: { kind: 'text', text: 'Giving up.' } },
      ],
      { lane: sessionId },
    );
    const { turnId } = await env.agent.send(sessionOptions(sessionId), { text: 'sleep soon' });
    await env.agent.waitForTurn(sessionId, turnId);
    expect(log.runs.filter((r) => r.key.startsWith(`${sessionId}:`))).toEqual([]);
    const requests = env.model.requestsFor(sessionId);
    const first = JSON.parse(String(toolMessages(requests[1]!.body)[0]!.content));
    expect(first.error).toMatchObject({ type: 'ToolInputInvalid' });
    expect(first.error.message).toMatch(/ms must be integer, got string/);
    expect(first.error.message).toMatch(/Expected \{ ms: integer, label: string \}/);
    const second = JSON.parse(String(toolMessages(requests[2]!.body).at(-1)!.content));
    expect(second.error.message).toMatch(/not valid JSON/);
  });

  it('returns a timeout and a permission failure to the model with a next step, not a crash', async () => {
    const sessionId = uniqueId('s');
    env.model.script(
      [
        { respond: { kind: 'tool_calls', calls: [{ id: 'call_slow', name: 'local_slow', arguments: {} }, { id: 'call_perm', name: 'local_forbidden', arguments: {} }] } },
        { match: { hasToolResults: true }, respond: { kind: 'text', text: 'Sorry.' } },
      ],
      { lane: sessionId },
    );
    const { turnId } = await env.agent.send(sessionOptions(sessionId), { text: 'payroll please' });
    const result = await env.agent.waitForTurn(sessionId, turnId);
    expect(result.outcome).toBe('completed');
    const [timeout, perm] = toolMessages(env.model.requestsFor(sessionId)[1]!.body).map((m) => JSON.parse(String(m.content)).error);
    expect(timeout).toMatchObject({ type: 'ToolTimeout' });
    expect(timeout.next_step).toMatch(/slow or unavailable/);
    expect(perm).toMatchObject({ type: 'ToolPermissionDenied' });
    expect(perm.message).toMatch(/may not read payroll/);
    expect(perm.next_step).toMatch(/contact an administrator/);
  });

  it('retries a 429 after its Retry-After and fails a 400 context-length error at once with what to fix', async () => {
    const sessionId = uniqueId('s');
    env.model.script(
      [
        { respond: { kind: 'rate_limit', retryAfterSeconds: 1 } },
        { respond: { kind: 'text', text: 'after the wait' } },
        { respond: { kind: 'context_length' } },
      ],
      { lane: sessionId },
    );
    const first = await env.agent.send(sessionOptions(sessionId), { text: 'hello' });
    expect(await env.agent.waitForTurn(sessionId, first.turnId)).toMatchObject({ outcome: 'completed', text: 'after the wait' });
    const [limited, retried] = env.model.requestsFor(sessionId);
    expect(retried!.receivedAt - limited!.receivedAt).toBeGreaterThanOrEqual(950);
    const second = await env.agent.sendTo(sessionId, { text: 'a very long message' });
    const events = await collectEvents(env.agent, sessionId, turnCompleted(second.turnId));
    const failed = await env.agent.waitForTurn(sessionId, second.turnId);
    expect(failed.outcome).toBe('failed');
    expect(env.model.requestsFor(sessionId)).toHaveLength(3);
    const error = events.map((e) => e.event).find((e) => e.type === 'error');
    expect(error).toMatchObject({ errorType: 'ModelRequestInvalid' });
    expect(error?.type === 'error' && error.message).toMatch(/context window/);
  });

  it('gives each step its own idempotency key when the model reuses a call id across steps', async () => {
    const sessionId = uniqueId('s');
    env.model.script(
      [
        { respond: { kind: 'tool_calls', calls: [{ id: 'call_0', name: 'local_note', arguments: { text: 'first' } }] } },
        { match: { hasToolResults: true }, respond: { kind: 'tool_calls', calls: [{ id: 'call_0', name: 'local_note', arguments: { text: 'second' } }] } },
        { match: { hasToolResults: true }, respond: { kind: 'text', text: 'Both stored.' } },
      ],
      { lane: sessionId },
    );
    const { turnId } = await env.agent.send(sessionOptions(sessionId), { text: 'store two notes' });
    expect(await env.agent.waitForTurn(sessionId, turnId)).toMatchObject({ outcome: 'completed', toolCalls: 2 });
    const keys = log.runs.filter((r) => r.key.startsWith(`${sessionId}:`)).map((r) => r.key);
    expect(keys).toEqual([`${sessionId}:${turnId}:1:call_0`, `${sessionId}:${turnId}:2:call_0`]);
  });

  it('rejects arguments nested 20,000 deep as invalid input, tells the model why, and streams only a bounded preview', async () => {
    const sessionId = uniqueId('s');
    const deep = `{"text":${'['.repeat(20_000)}${']'.repeat(20_000)}}`;
    env.model.script(
      [
        { respond: { kind: 'tool_calls', calls: [{ id: 'call_deep', name: 'local_note', arguments: deep }] } },
        { match: { hasToolResults: true }, respond: { kind: 'text', text: 'Sorry.' } },
      ],
      { lane: sessionId },
    );
    const { turnId } = await env.agent.send(sessionOptions(sessionId), { text: 'store a deep note' });
    const events = await collectEvents(env.agent, sessionId, turnCompleted(turnId));
    expect(await env.agent.waitForTurn(sessionId, turnId)).toMatchObject({ outcome: 'completed', text: 'Sorry.' });
    expect(log.runs.filter((r) => r.key.startsWith(`${sessionId}:`))).toHaveLength(0);
    const [message] = toolMessages(env.model.requestsFor(sessionId)[1]!.body);
    const { error } = JSON.parse(String(message!.content)) as { error: { type: string; message: string } };
    expect(error.type).toBe('ToolInputInvalid');
    expect(error.message).toMatch(/nested more than 32 levels/);
    const start = events.map((e) => e.event).find((e) => e.type === 'tool_call_start');
    expect(start?.type === 'tool_call_start' && start.argumentsPreview.length).toBeLessThanOrEqual(500);
    const history = await env.client.workflow.getHandle(`session-${sessionId}`).fetchHistory();
    expect(history.events?.some((e) => e.workflowTaskFailedEventAttributes)).toBe(false);
  });

  it('counts a confirmed call\'s run time apart from the time it waited, and counts model attempts', async () => {
    const sessionId = uniqueId('s');
    env.model.script(
      [
        { respond: { kind: 'server_error' } },
        { respond: { kind: 'tool_calls', calls: [{ id: 'call_w', name: 'local_wipe', arguments: { confirmText: 'yes' } }] } },
        { match: { hasToolResults: true }, respond: { kind: 'text', text: 'Wiped.' } },
      ],
      { lane: sessionId },
    );
    const { turnId } = await env.agent.send(sessionOptions(sessionId), { text: 'wipe my notes' });
    const held = await collectEvents(env.agent, sessionId, (e) => e.type === 'confirmation_required');
    await new Promise((r) => setTimeout(r, 1_200));
    await env.agent.approve(sessionId, 'call_w');
    const events = await collectEvents(env.agent, sessionId, turnCompleted(turnId), { fromOffset: held[held.length - 1]!.offset + 1 });
    const result = events.map((e) => e.event).find((e) => e.type === 'tool_call_result');
    expect(result).toMatchObject({ ok: true });
    expect(result?.type === 'tool_call_result' && result.waitedMs).toBeGreaterThanOrEqual(1_000);
    expect(result?.type === 'tool_call_result' && result.durationMs).toBeLessThan(1_000);
    const turn = await env.agent.waitForTurn(sessionId, turnId);
    expect(turn).toMatchObject({ outcome: 'completed', modelCalls: 2, modelAttempts: 3 });
    const view = await env.agent.getSession(sessionId);
    expect(view.counters).toMatchObject({ modelCalls: 2, modelAttempts: 3, modelFailures: 0 });
  });

  it('does not run a call whose arguments never came because the answer was cut off (finish_reason length): the model is told to send it again', async () => {
    const sessionId = uniqueId('s');
    // local_slow takes no parameters: empty arguments parsed as {} and it ran, although the model never finished the call.
    scriptCallCutBeforeArguments(env.model, sessionId, 'local_slow');
    const { turn } = await env.agent.ask(sessionOptions(sessionId), { text: 'go slowly' });
    expect(turn).toMatchObject({ outcome: 'completed', text: 'I will ask again.' });
    expect(log.runs.filter((r) => r.key.startsWith(`${sessionId}:`))).toEqual([]);
    const [result] = toolMessages(env.model.requestsFor(sessionId).at(-1)!.body);
    expect(result).toMatchObject({ tool_call_id: 'call_cut', content: expect.stringContaining("the model's answer was cut off before this call's arguments came") });
  });

  it('tells the model, with the last result, that calls past the 32 a response takes were not run', async () => {
    const sessionId = uniqueId('s');
    const calls = Array.from({ length: 40 }, (_, i) => ({ id: `call_${i}`, name: 'local_current_time', arguments: { timeZone: 'UTC' } }));
    env.model.script(
      [
        { respond: { kind: 'tool_calls', calls } },
        { match: { hasToolResults: true }, respond: { kind: 'text', text: 'Thirty-two of them.' } },
      ],
      { lane: sessionId },
    );
    const { turn } = await env.agent.ask(sessionOptions(sessionId), { text: 'the time, forty times' });
    expect(turn).toMatchObject({ outcome: 'completed', toolCalls: 32 });
    const second = env.model.requestsFor(sessionId)[1]!.body as ChatRequest;
    const results = (second.messages as Array<{ role: string; content?: unknown }>).filter((m) => m.role === 'tool');
    expect(results).toHaveLength(32);
    // Before, the eight calls past the limit simply vanished: nothing in the conversation said they were not run.
    expect(String(results.at(-1)?.content)).toMatch(/\[runtime check\] 8 more tool call\(s\) in that response were not run: at most 32/);
    expect(String(results.at(0)?.content)).not.toMatch(/runtime check/);
  });
});
