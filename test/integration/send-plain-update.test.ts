import { Client, type WorkflowClientInterceptor } from '@temporalio/client';
import { AgentClient } from '../../client';
import { startTestEnv, sessionOptions, uniqueId, type TestEnv } from '../support/test-env';

/**
 * A message to a session this client has seen running goes as a plain update,
 * not update-with-start (less work for the server on every message); a session
 * that has closed since gets update-with-start, and its message is delivered.
 */
let env: TestEnv;
beforeAll(async () => {
  env = await startTestEnv({ name: 'plain-update' });
});
afterAll(async () => {
  await env?.close();
});

function countingClient(): { agent: AgentClient; calls: { update: number; withStart: number } } {
  const calls = { update: 0, withStart: 0 };
  const counter: WorkflowClientInterceptor = {
    async startUpdate(input, next) {
      calls.update++;
      return next(input);
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
});
