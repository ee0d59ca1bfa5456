import { Client, type WorkflowClientInterceptor } from '@temporalio/client';
import { AgentClient } from '../../client';
import { probeTools, type ProbeLog } from '../support/probe-tools';
import { startTestEnv, sessionOptions, uniqueId, type TestEnv } from '../support/test-env';

/**
 * A message to a session this client has seen running goes as a plain update,
 * not update-with-start (less work for the server on every message); a session
 * that has closed since gets update-with-start, and its message is delivered.
 */
const probeLog: ProbeLog = { runs: [] };
let env: TestEnv;
beforeAll(async () => {
  env = await startTestEnv({ name: 'plain-update', extraTools: probeTools(probeLog) });
});
afterAll(async () => {
  await env?.close();
});

/**
 * `holdUntilNewRun`: a plain update's first call returns only after the
 * session has continued as new, and without the outcome, as the server
 * answers when a turn outlasts its long poll (20 s): whatever waits for the
 * result next meets a newer run.
 */
function countingClient(afterNewRun?: 'hold' | 'deliver again'): { agent: AgentClient; calls: { update: number; withStart: number } } {
  const calls = { update: 0, withStart: 0 };
  const counter: WorkflowClientInterceptor = {
    async startUpdate(input, next) {
      calls.update++;
      if (!afterNewRun) return next(input);
      const output = await next(input);
      const handle = env.client.workflow.getHandle(input.workflowExecution.workflowId);
      const until = Date.now() + 30_000;
      while ((await handle.describe()).runId === output.workflowRunId) {
        if (Date.now() > until) throw new Error('the session did not continue as new within 30 s');
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      // 'deliver again': the same request once more, as the connection's retry sends it when the transport
      // failed while the server held the call; it now reaches the run the session continued into.
      return afterNewRun === 'hold' ? { ...output, outcome: undefined } : next(input);
    },
    async startUpdateWithStart(input, next) {
      calls.withStart++;
      return next(input);
    },
  };
  const client = new Client({
    connection: env.client.connection,
    namespace: env.config.temporal.namespace,
    dataConverter: env.client.options.dataConverter,
    interceptors: { workflow: [counter] },
  });
  return { agent: new AgentClient({ client, taskQueue: env.taskQueue, principal: { tenant: 'acme', user: 'ana' } }), calls };
}

/** A session whose second turn is long in history (ten model calls), so it continues as new right after it. */
function sessionWithLongSecondTurn() {
  const sessionId = uniqueId('s');
  env.model.script(
    [
      { respond: { kind: 'text', text: 'hello' } },
      { times: 9, respond: { kind: 'tool_calls', calls: [{ name: 'local_sleepy', arguments: { ms: 1, label: 'step' } }] } },
      { respond: { kind: 'text', text: 'nine steps later' } },
    ],
    { lane: sessionId },
  );
  return { sessionId, options: sessionOptions(sessionId, { limits: { maxHistoryEvents: 200, maxSteps: 12 } }) };
}

describe('sending to a session', () => {
  it('uses update-with-start for a session it has not seen, then plain updates, shared by clients made with as()', async () => {
    const { agent, calls } = countingClient();
    const sessionId = uniqueId('s');
    env.model.script(
      [{ respond: { kind: 'text', text: 'one' } }, { respond: { kind: 'text', text: 'two' } }, { respond: { kind: 'text', text: 'three' } }],
      { lane: sessionId },
    );
    const first = await agent.ask(sessionOptions(sessionId), { text: 'first' });
    expect(first.turn).toMatchObject({ outcome: 'completed', text: 'one' });
    expect(calls).toEqual({ update: 0, withStart: 1 });
    const second = await agent.ask(sessionOptions(sessionId), { text: 'second' });
    expect(second.turn).toMatchObject({ outcome: 'completed', text: 'two' });
    expect(calls).toEqual({ update: 1, withStart: 1 });
    const accepted = await agent.as({ tenant: 'acme', user: 'ana' }).send(sessionOptions(sessionId), { text: 'third' });
    expect(accepted).toMatchObject({ turnId: 'turn-3', version: 3 });
    expect(calls).toEqual({ update: 2, withStart: 1 });
    await agent.waitForTurn(sessionId, accepted.turnId);
    env.model.assertDone(sessionId);
  });

  it('sends a message to a running session in one call, with no poll for its result', async () => {
    const { agent, calls } = countingClient();
    const sessionId = uniqueId('s');
    env.model.script([{ respond: { kind: 'text', text: 'one' } }, { respond: { kind: 'text', text: 'two' } }, { respond: { kind: 'text', text: 'three' } }], { lane: sessionId });
    await agent.ask(sessionOptions(sessionId), { text: 'first' });
    const service = agent.client.connection.workflowService;
    const polls = jest.spyOn(service, 'pollWorkflowExecutionUpdate');
    const updates = jest.spyOn(service, 'updateWorkflowExecution');
    try {
      const second = await agent.ask(sessionOptions(sessionId), { text: 'second' });
      expect(second.turn).toMatchObject({ outcome: 'completed', text: 'two' });
      const third = await agent.send(sessionOptions(sessionId), { text: 'third' });
      expect(third).toMatchObject({ turnId: 'turn-3', version: 3 });
      // Each message: one UpdateWorkflowExecution, held by the server until the update completed.
      expect(updates).toHaveBeenCalledTimes(2);
      expect(polls).not.toHaveBeenCalled();
    } finally {
      polls.mockRestore();
      updates.mockRestore();
    }
    expect(calls).toEqual({ update: 2, withStart: 1 });
    await agent.waitForTurn(sessionId, 'turn-3');
    env.model.assertDone(sessionId);
  });

  it('starts the session again when it ended or was terminated since, and delivers the message once', async () => {
    const { agent, calls } = countingClient();
    const sessionId = uniqueId('s');
    env.model.script(
      [{ respond: { kind: 'text', text: 'before' } }, { respond: { kind: 'text', text: 'after the end' } }, { respond: { kind: 'text', text: 'after terminate' } }],
      { lane: sessionId },
    );
    const handle = env.client.workflow.getHandle(`session-${sessionId}`);
    await agent.ask(sessionOptions(sessionId), { text: 'hello' });
    await agent.end(sessionId, 'test ends it');
    await handle.result();

    const afterEnd = await agent.ask(sessionOptions(sessionId), { text: 'back again' });
    expect(afterEnd.turn).toMatchObject({ outcome: 'completed', text: 'after the end' });
    // The plain update was refused (no open run), then update-with-start started a new one.
    expect(calls).toEqual({ update: 1, withStart: 2 });

    await handle.terminate('an operator stopped it');
    const afterTerminate = await agent.ask(sessionOptions(sessionId), { text: 'and again' });
    expect(afterTerminate.turn).toMatchObject({ outcome: 'completed', text: 'after terminate' });
    expect(calls).toEqual({ update: 2, withStart: 3 });
    // Each message reached the model once.
    expect(env.model.requestsFor(sessionId)).toHaveLength(3);
    env.model.assertDone(sessionId);
  });

  it('gets the result of a message from the run that accepted it, after the session continued as new, and runs it once', async () => {
    const { agent, calls } = countingClient('hold');
    const { sessionId, options } = sessionWithLongSecondTurn();
    await agent.ask(options, { text: 'hi' });
    const second = await agent.ask(options, { text: 'take many steps' });
    expect(second.turn).toMatchObject({ outcome: 'completed', modelCalls: 10, toolCalls: 9 });
    expect(second.turn.text).toContain('nine steps later');
    // One plain update for the second message, its result read from the run that accepted it (the server's
    // first answer had none), never sent again with the start.
    expect(calls).toEqual({ update: 1, withStart: 1 });
    expect(env.model.requestsFor(sessionId)).toHaveLength(11);
    const view = await env.agent.getSession(sessionId);
    expect(view.counters.turns).toBe(2);
    expect(view.counters.continuedAsNew).toBeGreaterThanOrEqual(1);
    env.model.assertDone(sessionId);
  });

  it('runs a message once when its call reaches the run the session continued into a second time', async () => {
    const { agent } = countingClient('deliver again');
    const { sessionId, options } = sessionWithLongSecondTurn();
    await agent.ask(options, { text: 'hi' });
    // No clientMessageId from the caller: the client gives the message one, which the new run recognises.
    const second = await agent.ask(options, { text: 'take many steps' });
    expect(second).toMatchObject({ turnId: 'turn-2' });
    expect(second.turn).toMatchObject({ outcome: 'completed', modelCalls: 10, toolCalls: 9 });
    expect(env.model.requestsFor(sessionId)).toHaveLength(11);
    const view = await env.agent.getSession(sessionId);
    expect(view.counters.turns).toBe(2);
    expect(view.counters.continuedAsNew).toBeGreaterThanOrEqual(1);
    env.model.assertDone(sessionId);
  });
});
