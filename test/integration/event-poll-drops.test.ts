import { Client, Connection } from '@temporalio/client';
import { Metadata } from '@grpc/grpc-js';
import { AgentClient, sessionConnectionInterceptors, type SessionEvent } from '../../client';
import { SessionClosedError } from '../../client';
import { workflowIdFor } from '../../workflows/messages';
import { eventually, sessionOptions, startTestEnv, uniqueId, type TestEnv } from '../support/test-env';

/*
 * @temporalio/workflow-streams 1.23.0 ends a subscription, as if the stream
 * were over, when one poll's call times out or is cancelled (gRPC
 * DEADLINE_EXCEEDED or CANCELLED: a loaded server, a reset connection) on a
 * run that has not continued as new. The session's readers (the typed
 * client's events(), and through it the API's event streams and the web
 * console) used to end there, missing every later event, and the API told
 * browsers the stream had ended. The fault injector below fails poll calls
 * on the reader's own connection with those codes.
 */

let env: TestEnv;
beforeAll(async () => {
  env = await startTestEnv({ name: 'event-poll-drops' });
});
afterAll(async () => {
  await env?.close();
});

const GRPC = { CANCELLED: 1, DEADLINE_EXCEEDED: 4 } as const;

/**
 * An agent client on its own connection whose update calls can be cut: `cut(...codes)` fails the calls waiting
 * on the server now (oldest first), then the next ones, one code each. A cut call's request may still take
 * effect on the server, as with a real timeout; only its answer is lost.
 */
async function faultyClient(): Promise<{ agent: AgentClient; cut(...codes: number[]): void; failed: () => number; close(): Promise<void> }> {
  const address = env.client.connection instanceof Connection ? env.client.connection.options.address : '';
  const connection = await Connection.connect({ address, interceptors: sessionConnectionInterceptors() });
  const client = new Client({ connection, namespace: env.client.options.namespace, dataConverter: env.client.options.dataConverter });
  const service = connection.workflowService as unknown as Record<string, (req: unknown) => Promise<unknown>>;
  const pending: number[] = [];
  const inFlight = new Set<(code: number) => void>();
  let failed = 0;
  const failure = (code: number) => {
    failed += 1;
    return Object.assign(new Error(`${code} injected`), { code, details: 'injected', metadata: new Metadata() });
  };
  // A poll's two calls (starting the update, waiting for its outcome), and a message's (with the start of its session).
  for (const name of ['updateWorkflowExecution', 'pollWorkflowExecutionUpdate', 'executeMultiOperation']) {
    const real = service[name]!.bind(service);
    service[name] = (req: unknown) => {
      const code = pending.shift();
      if (code !== undefined) return Promise.reject(failure(code));
      return new Promise((resolve, reject) => {
        const cutOff = (c: number) => reject(failure(c));
        inFlight.add(cutOff);
        real(req).then(resolve, reject).finally(() => inFlight.delete(cutOff));
      });
    };
  }
  return {
    agent: new AgentClient({ client, taskQueue: env.taskQueue, principal: { tenant: 'acme', user: 'ana' } }),
    cut: (...codes) => {
      for (const cutOff of [...inFlight]) {
        const code = codes.shift();
        if (code === undefined) return;
        inFlight.delete(cutOff);
        cutOff(code);
      }
      pending.push(...codes);
    },
    failed: () => failed,
    close: () => connection.close(),
  };
}

const turnsEnded = (events: SessionEvent[]) => events.filter((e) => e.event.type === 'turn_completed').length;

it.each([
  ['timed out', [GRPC.DEADLINE_EXCEEDED]],
  ['cancelled', [GRPC.CANCELLED]],
  ['failed three times running', [GRPC.DEADLINE_EXCEEDED, GRPC.CANCELLED, GRPC.DEADLINE_EXCEEDED]],
])('a reader whose poll call %s keeps reading: every later event once, in order, and it ends when the session does', async (_name, codes) => {
  const sessionId = uniqueId('poll-drop');
  env.model.script([{ times: 3, respond: { kind: 'text', text: 'answer' } }], { lane: sessionId });
  await env.agent.ask(sessionOptions(sessionId), { text: 'first' });
  const faulty = await faultyClient();
  const events: SessionEvent[] = [];
  let ended = false;
  const reading = (async () => {
    for await (const e of faulty.agent.events(sessionId, { fromOffset: 0 })) events.push(e);
    ended = true;
  })();
  try {
    await eventually(() => turnsEnded(events) === 1, 'the reader to see the first turn');
    // The reader's poll waiting for the next event is cut, then the calls it makes next.
    faulty.cut(...codes);
    await env.agent.ask(sessionOptions(sessionId), { text: 'second' });
    await eventually(() => faulty.failed() === codes.length, 'the injected failures to be spent');
    await env.agent.ask(sessionOptions(sessionId), { text: 'third' });
    await eventually(() => turnsEnded(events) === 3, 'the reader to see the third turn');
    expect(ended).toBe(false);
    const offsets = events.map((e) => e.offset);
    expect(offsets).toEqual(Array.from({ length: offsets.length }, (_, i) => offsets[0]! + i));
    // Ending the session still ends the reader (it does not poll a closed run for ever).
    await env.agent.end(sessionId);
    await reading;
    expect(ended).toBe(true);
  } finally {
    await faulty.close();
  }
}, 60_000);

it.each([
  ['timed out', GRPC.DEADLINE_EXCEEDED],
  ['cancelled', GRPC.CANCELLED],
])('a message or turn wait whose call is cut short (%s) is sent again: each turn is returned, and runs once', async (_name, code) => {
  const sessionId = uniqueId('wait-drop');
  // Answers streamed over about 600 ms, so each call below is still waiting when it is cut.
  env.model.script([{ times: 4, respond: { kind: 'text', text: 'answer', chunkSize: 1, delayMs: 100 } }], { lane: sessionId });
  await env.agent.ask(sessionOptions(sessionId), { text: 'first' });
  const faulty = await faultyClient();
  const cutWhileWaiting = async <T>(call: Promise<T>): Promise<T> => {
    const before = faulty.failed();
    await new Promise((r) => setTimeout(r, 150));
    faulty.cut(code);
    const result = await call;
    expect(faulty.failed()).toBe(before + 1);
    return result;
  };
  try {
    // This client has not seen the session: the message goes with a start of the session if none runs.
    expect((await cutWhileWaiting(faulty.agent.ask(sessionOptions(sessionId), { text: 'second' }))).turn).toMatchObject({ turnId: 'turn-2', outcome: 'completed', text: 'answer' });
    // Now it has: the message alone.
    expect((await cutWhileWaiting(faulty.agent.ask(sessionOptions(sessionId), { text: 'third' }))).turn).toMatchObject({ turnId: 'turn-3', outcome: 'completed', text: 'answer' });
    // A wait for a turn sent without waiting.
    const sent = await faulty.agent.send(sessionOptions(sessionId), { text: 'fourth' });
    expect(await cutWhileWaiting(faulty.agent.waitForTurn(sessionId, sent.turnId))).toMatchObject({ turnId: 'turn-4', outcome: 'completed', text: 'answer' });
    // The wait sent again joined the one the cut call had started (same update id), which would otherwise have
    // held one of the session's three turn-wait slots until the turn ended.
    const history = await env.client.workflow.getHandle(workflowIdFor(sessionId)).fetchHistory();
    const waits = (history.events ?? []).filter((e) => e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name === 'waitForTurn');
    expect(waits).toHaveLength(1);
    // Sent again under its id, each message ran once: no fifth turn, then or a moment later.
    await new Promise((r) => setTimeout(r, 500));
    const view = await env.agent.getSession(sessionId);
    expect(view.counters.turns).toBe(4);
    expect(view.queuedMessages).toBe(0);
    expect(view.currentTurnId).toBeNull();
  } finally {
    await faulty.close();
  }
}, 60_000);

it.each([
  ['with a start of the session', false],
  ['to a session the client knows runs', true],
])('a message cut short (%s) whose run is then terminated is not started again in a new run: the caller is told it may have run', async (_name, known) => {
  const sessionId = uniqueId('cut-closed');
  env.model.script([{ times: 3, respond: { kind: 'text', text: 'answer', chunkSize: 1, delayMs: 100 } }], { lane: sessionId });
  const faulty = await faultyClient();
  try {
    await (known ? faulty.agent : env.agent).ask(sessionOptions(sessionId), { text: 'first' });
    const handle = env.client.workflow.getHandle(workflowIdFor(sessionId));
    const { runId } = await handle.describe();
    const asking = faulty.agent.ask(sessionOptions(sessionId), { text: 'second' });
    await new Promise((r) => setTimeout(r, 150));
    // The call is cut, and before it is sent again (100 ms later) the run that took the message is gone.
    faulty.cut(GRPC.DEADLINE_EXCEEDED);
    await handle.terminate('test: the run ends while the message is sent again');
    const failure = await asking.then(() => undefined, (err: unknown) => err);
    expect(failure).toBeInstanceOf(SessionClosedError);
    expect(String(failure)).toMatch(/read the session/i);
    // No new run took the message again.
    await new Promise((r) => setTimeout(r, 500));
    expect((await handle.describe()).runId).toBe(runId);
  } finally {
    await faulty.close();
  }
}, 60_000);
