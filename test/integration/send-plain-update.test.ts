import { Client, Connection, type WorkflowClientInterceptor } from '@temporalio/client';
import { AgentClient } from '../../client';
import type { ScriptedStep } from '../../scripted-model/scenario';
import { temporalTransportOptions } from '../../workers/temporal-connection-options';
import { probeTools, type ProbeLog } from '../support/probe-tools';
import { startTestEnv, sessionOptions, uniqueId, type TestEnv } from '../support/test-env';

/**
 * A message to a session this client has seen running goes as a plain update,
 * not update-with-start (less work for the server on every message), and in
 * one round trip to the run it last saw; a run that has closed since refuses
 * it and the session's current run gets it; a session that has closed since
 * gets update-with-start, and its message is delivered once.
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
 * `hold.on`: a plain update's first call returns only after the session has
 * continued as new, and without the outcome, as the server answers when a
 * turn outlasts its long poll (20 s): whatever waits for the result next
 * meets a newer run.
 */
function countingClient(holdUntilNewRun = false): { agent: AgentClient; calls: { update: number; withStart: number }; hold: { on: boolean } } {
  const calls = { update: 0, withStart: 0 };
  const hold = { on: holdUntilNewRun };
  const counter: WorkflowClientInterceptor = {
    async startUpdate(input, next) {
      calls.update++;
      if (!hold.on) return next(input);
      const output = await next(input);
      const handle = env.client.workflow.getHandle(input.workflowExecution.workflowId);
      const until = Date.now() + 30_000;
      while ((await handle.describe()).runId === output.workflowRunId) {
        if (Date.now() > until) throw new Error('the session did not continue as new within 30 s');
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      return { ...output, outcome: undefined };
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
  return { agent: new AgentClient({ client, taskQueue: env.taskQueue, principal: { tenant: 'acme', user: 'ana' } }), calls, hold };
}

/** A connection of its own whose calls to the update RPCs are counted, by method name. */
async function countingConnection(): Promise<{ connection: Connection; rpcs: Map<string, number> }> {
  const rpcs = new Map<string, number>();
  const connection = await Connection.connect({ address: env.config.temporal.address, ...temporalTransportOptions(env.config.temporal) });
  const service = connection.workflowService as unknown as Record<string, (...args: unknown[]) => unknown>;
  for (const method of ['updateWorkflowExecution', 'pollWorkflowExecutionUpdate', 'executeMultiOperation']) {
    const call = (service[method] as (...args: unknown[]) => unknown).bind(service);
    service[method] = (...args: unknown[]) => {
      rpcs.set(method, (rpcs.get(method) ?? 0) + 1);
      return call(...args);
    };
  }
  return { connection, rpcs };
}

/** Options under which a turn of nine tool steps is long enough in history that the session continues as new after it. */
const continuing = (sessionId: string) => sessionOptions(sessionId, { limits: { maxHistoryEvents: 200, maxSteps: 12 } });

/** The model's side of that long turn. */
const NINE_STEPS: ScriptedStep[] = [
  { times: 9, respond: { kind: 'tool_calls', calls: [{ name: 'local_sleepy', arguments: { ms: 1, label: 'step' } }] } },
  { respond: { kind: 'text', text: 'nine steps later' } },
];

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
    const { agent, calls } = countingClient(true);
    const sessionId = uniqueId('s');
    const options = continuing(sessionId);
    env.model.script([{ respond: { kind: 'text', text: 'hello' } }, ...NINE_STEPS], { lane: sessionId });
    await agent.ask(options, { text: 'hi' });
    const second = await agent.ask(options, { text: 'take many steps' });
    expect(second.turn).toMatchObject({ outcome: 'completed', modelCalls: 10, toolCalls: 9 });
    expect(second.turn.text).toContain('nine steps later');
    // One plain update for the second message, never sent again with the start.
    expect(calls).toEqual({ update: 1, withStart: 1 });
    expect(env.model.requestsFor(sessionId)).toHaveLength(11);
    const view = await env.agent.getSession(sessionId);
    expect(view.counters.turns).toBe(2);
    expect(view.counters.continuedAsNew).toBeGreaterThanOrEqual(1);
    env.model.assertDone(sessionId);
  });

  it('sends a message to a run it has seen in one round trip, the result included', async () => {
    const { connection, rpcs } = await countingConnection();
    try {
      const client = new Client({ connection, namespace: env.config.temporal.namespace, dataConverter: env.client.options.dataConverter });
      const agent = new AgentClient({ client, taskQueue: env.taskQueue, principal: { tenant: 'acme', user: 'ana' } });
      const sessionId = uniqueId('s');
      env.model.script(['one', 'two', 'three', 'four'].map((text) => ({ respond: { kind: 'text' as const, text } })), { lane: sessionId });
      const sent = (method: string) => rpcs.get(method) ?? 0;
      // The first message starts the session; the second learns which run took it.
      await agent.ask(sessionOptions(sessionId), { text: 'first' });
      await agent.ask(sessionOptions(sessionId), { text: 'second' });
      const [updates, polls] = [sent('updateWorkflowExecution'), sent('pollWorkflowExecutionUpdate')];
      const third = await agent.ask(sessionOptions(sessionId), { text: 'third' });
      const fourth = await agent.send(sessionOptions(sessionId), { text: 'fourth' });
      expect(third.turn).toMatchObject({ outcome: 'completed', text: 'three' });
      expect(fourth).toMatchObject({ turnId: 'turn-4', version: 4 });
      expect(sent('updateWorkflowExecution') - updates).toBe(2);
      expect(sent('pollWorkflowExecutionUpdate') - polls).toBe(0);
      expect(sent('executeMultiOperation')).toBe(1);
      expect(await agent.waitForTurn(sessionId, fourth.turnId)).toMatchObject({ outcome: 'completed', text: 'four' });
      env.model.assertDone(sessionId);
    } finally {
      await connection.close();
    }
  });

  it('sends to the session\'s current run when the run it saw has continued as new, and runs the message once', async () => {
    const { agent, calls } = countingClient();
    const sessionId = uniqueId('s');
    const options = continuing(sessionId);
    env.model.script([{ respond: { kind: 'text', text: 'hello' } }, ...NINE_STEPS, { respond: { kind: 'text', text: 'on the new run' } }], { lane: sessionId });
    await agent.ask(options, { text: 'hi' });
    const handle = env.client.workflow.getHandle(`session-${sessionId}`);
    const firstRun = (await handle.describe()).runId;
    await agent.ask(options, { text: 'take many steps' });
    const until = Date.now() + 30_000;
    while ((await handle.describe()).runId === firstRun) {
      if (Date.now() > until) throw new Error('the session did not continue as new within 30 s');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const third = await agent.ask(options, { text: 'and now?' });
    expect(third.turn).toMatchObject({ outcome: 'completed', text: 'on the new run' });
    // The run it saw refused the message (closed), the current one took it: no update-with-start, no second delivery.
    expect(calls).toEqual({ update: 3, withStart: 1 });
    expect(env.model.requestsFor(sessionId)).toHaveLength(12);
    expect((await env.agent.getSession(sessionId)).counters.turns).toBe(3);
    env.model.assertDone(sessionId);
  });

  it('gets the result from the run it sent to, when that run continued as new before answering', async () => {
    const { agent, calls, hold } = countingClient();
    const sessionId = uniqueId('s');
    const options = continuing(sessionId);
    env.model.script([{ respond: { kind: 'text', text: 'hello' } }, { respond: { kind: 'text', text: 'still here' } }, ...NINE_STEPS], { lane: sessionId });
    await agent.ask(options, { text: 'hi' });
    await agent.ask(options, { text: 'still there?' });
    // The client now knows the run; this message goes to it in one call, which answers only once a newer run exists.
    hold.on = true;
    const third = await agent.ask(options, { text: 'take many steps' });
    expect(third.turn).toMatchObject({ outcome: 'completed', modelCalls: 10, toolCalls: 9 });
    expect(third.turn.text).toContain('nine steps later');
    expect(calls).toEqual({ update: 2, withStart: 1 });
    expect(env.model.requestsFor(sessionId)).toHaveLength(12);
    expect((await env.agent.getSession(sessionId)).counters.turns).toBe(3);
    env.model.assertDone(sessionId);
  });
});
