import { Client, Connection, defaultGrpcRetryOptions, makeGrpcRetryInterceptor, type GrpcRetryOptions } from '@temporalio/client';
import { InterceptingCall, Metadata, status as grpcStatus, type Interceptor } from '@grpc/grpc-js';
import { AgentClient } from '../../client';
import { CLOSING_RETRY_ATTEMPTS, CLOSING_RETRY_FIRST_MS, isRunClosing, sessionRetryOptions } from '../../client/run-closing-retry';
import { dataConverterFor } from '../../codec/data-converter';
import { sessionOptions, startTestEnv, uniqueId, type TestEnv } from '../support/test-env';

/*
 * A message that reaches a session while its run is closing (the workflow
 * task that continues it as new) is refused by the server with
 * RESOURCE_EXHAUSTED "workflow is closing", and the same call sent again
 * lands on the next run. The SDK's retry backs that code off from 1.7 s;
 * the project's connections retry it after 25 ms. The window is one
 * workflow task, too narrow to hit on purpose, so a fault injector between
 * the retry and the wire gives the server's refusal to the first plain
 * update a connection sends (the real server's text, measured in a probe:
 * docs/performance.md, "What the freezes were").
 */

type GrpcStatusObject = Parameters<GrpcRetryOptions['delayFunction']>[1];

const CLOSING_TEXT = 'workflow operation can not be applied because workflow is closing';
const { RESOURCE_EXHAUSTED } = grpcStatus;

const status = (code: number, details: string): GrpcStatusObject => ({ code, details, metadata: new Metadata() });

/**
 * Refuses the first `UpdateWorkflowExecution` it sees as the server refuses one that reaches a closing run,
 * without sending it; counts update calls and notes when the refusal was given and when the call came again.
 */
function closingRunInjector(): { interceptor: Interceptor; refused: () => number; updates: () => number; retryGapMs: () => number } {
  let refused = 0;
  let updates = 0;
  let refusedAt = 0;
  let againAt = 0;
  const interceptor: Interceptor = (options, nextCall) => {
    const isUpdate = options.method_definition.path.endsWith('/UpdateWorkflowExecution');
    if (isUpdate) updates += 1;
    if (isUpdate && updates === 2) againAt = performance.now();
    if (!isUpdate || refused > 0) return new InterceptingCall(nextCall(options));
    refused += 1;
    return new InterceptingCall(nextCall(options), {
      // Never started on the wire: the caller hears the refusal instead, as gRPC gives a unary call's
      // failure (an empty message, then the status).
      start(_metadata, listener) {
        setImmediate(() => {
          refusedAt = performance.now();
          listener.onReceiveMessage(null);
          listener.onReceiveStatus({ code: RESOURCE_EXHAUSTED, details: CLOSING_TEXT, metadata: new Metadata() });
        });
      },
      sendMessage() {},
      halfClose() {},
    });
  };
  return { interceptor, refused: () => refused, updates: () => updates, retryGapMs: () => againAt - refusedAt };
}

let env: TestEnv;
beforeAll(async () => {
  env = await startTestEnv({ name: 'closing-retry', modelFallback: () => ({ kind: 'text', text: 'ok' }) });
});
afterAll(async () => env?.close());

async function agentWith(retry: Interceptor) {
  const injector = closingRunInjector();
  const connection = await Connection.connect({ address: env.config.temporal.address, interceptors: [retry, injector.interceptor] });
  const client = new Client({ connection, namespace: env.config.temporal.namespace, dataConverter: dataConverterFor(env.config.encryption) });
  return { agent: new AgentClient({ client, taskQueue: env.taskQueue, principal: { tenant: 'acme', user: 'ana' } }), injector, connection };
}

/** Starts a session (update-with-start), then sends a second message: a plain update, which the injector refuses once. */
async function secondMessage(retry: Interceptor): Promise<{ gapMs: number; refused: number; updates: number; turns: number; modelRequests: number }> {
  const { agent, injector, connection } = await agentWith(retry);
  try {
    const sessionId = uniqueId('closing');
    const options = sessionOptions(sessionId);
    await agent.ask(options, { text: 'first' });
    const second = await agent.ask(options, { text: 'second' });
    expect(second.turn).toMatchObject({ outcome: 'completed', text: 'ok' });
    const view = await env.agent.getSession(sessionId);
    return { gapMs: injector.retryGapMs(), refused: injector.refused(), updates: injector.updates(), turns: view.counters.turns, modelRequests: env.model.requestsFor(sessionId).length };
  } finally {
    await connection.close();
  }
}

describe('a call refused because the run is closing', () => {
  it('is told apart from other refusals by code and text', () => {
    expect(isRunClosing(status(RESOURCE_EXHAUSTED, CLOSING_TEXT))).toBe(true);
    expect(isRunClosing(status(RESOURCE_EXHAUSTED, 'namespace rate limit exceeded'))).toBe(false);
    expect(isRunClosing(status(14, CLOSING_TEXT))).toBe(false);
  });

  it('is retried after 25 ms, doubling to 5 s, over about the SDK\'s span; every other status keeps the SDK\'s back-off and choice', () => {
    const ours = sessionRetryOptions();
    const sdk = defaultGrpcRetryOptions();
    const closing = status(RESOURCE_EXHAUSTED, CLOSING_TEXT);
    // +-20% jitter, as the SDK's.
    [1, 2, 3].forEach((attempt, i) => {
      const d = ours.delayFunction(attempt, closing);
      expect(d).toBeGreaterThanOrEqual(CLOSING_RETRY_FIRST_MS * 2 ** i * 0.8);
      expect(d).toBeLessThanOrEqual(CLOSING_RETRY_FIRST_MS * 2 ** i * 1.2);
    });
    expect(ours.delayFunction(20, closing)).toBeLessThanOrEqual(5_000 * 1.2);
    expect(ours.retryableDecider(CLOSING_RETRY_ATTEMPTS - 1, closing)).toBe(true);
    expect(ours.retryableDecider(CLOSING_RETRY_ATTEMPTS, closing)).toBe(false);
    // The whole span of retries, at the jitter's low end, is no shorter than the SDK's at its high end minus a fifth.
    const span = (o: GrpcRetryOptions, s: GrpcStatusObject) => {
      let total = 0;
      for (let attempt = 1; o.retryableDecider(attempt, s); attempt++) total += o.delayFunction(attempt, s);
      return total;
    };
    expect(span(ours, closing)).toBeGreaterThan(30_000);
    // The SDK's own back-off for the code (1 s x 1.7, +-20%) for a refusal that is load.
    const load = status(RESOURCE_EXHAUSTED, 'namespace rate limit exceeded');
    expect(ours.delayFunction(1, load)).toBeGreaterThanOrEqual(1_700 * 0.8);
    for (const s of [load, status(14, 'unavailable'), status(3, 'invalid argument')]) {
      for (const attempt of [1, 9, 10]) expect(ours.retryableDecider(attempt, s)).toBe(sdk.retryableDecider(attempt, s));
    }
  });

  it('goes again within tens of ms on the connection AgentClient.connect makes', async () => {
    const made = await AgentClient.connect({ address: env.config.temporal.address, namespace: env.config.temporal.namespace, taskQueue: env.taskQueue, principal: { tenant: 'acme', user: 'ana' } });
    try {
      // Its retry interceptor, put in front of the injector on a connection of the test's own.
      const interceptors = (made.client.connection as Connection).options.interceptors;
      expect(interceptors).toHaveLength(1);
      const r = await secondMessage(interceptors[0]!);
      expect(r).toMatchObject({ refused: 1, updates: 2, turns: 2 });
      expect(r.gapMs).toBeLessThan(300);
    } finally {
      await made.client.connection.close();
    }
  });

  it('goes again within tens of ms and runs once, where the SDK default waits about 1.7 s', async () => {
    const ours = await secondMessage(makeGrpcRetryInterceptor(sessionRetryOptions()));
    const sdk = await secondMessage(makeGrpcRetryInterceptor(defaultGrpcRetryOptions()));
    for (const r of [ours, sdk]) {
      // Refused once, sent again once, and the turn ran once.
      expect(r).toMatchObject({ refused: 1, updates: 2, turns: 2, modelRequests: 2 });
    }
    // From the refusal to the call sent again, as the injector saw them.
    expect(sdk.gapMs).toBeGreaterThan(1_300);
    expect(ours.gapMs).toBeLessThan(300);
  });
});
