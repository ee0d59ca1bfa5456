import { Client, Connection, defaultGrpcRetryOptions, makeGrpcRetryInterceptor, type GrpcRetryOptions } from '@temporalio/client';
import { InterceptingCall, Metadata, status as grpcStatus, type Interceptor } from '@grpc/grpc-js';
import { AgentClient } from '../../client';
import { CLOSING_RETRY_FIRST_MS, isRunClosing, sessionRetryOptions } from '../../client/run-closing-retry';
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

/** Refuses the first `UpdateWorkflowExecution` it sees as the server refuses one that reaches a closing run, without sending it; counts every call. */
function closingRunInjector(): { interceptor: Interceptor; refused: () => number; updates: () => number } {
  let refused = 0;
  let updates = 0;
  const interceptor: Interceptor = (options, nextCall) => {
    const isUpdate = options.method_definition.path.endsWith('/UpdateWorkflowExecution');
    if (isUpdate) updates += 1;
    if (!isUpdate || refused > 0) return new InterceptingCall(nextCall(options));
    refused += 1;
    return new InterceptingCall(nextCall(options), {
      // Never started on the wire: the caller hears the refusal instead, as gRPC gives a unary call's
      // failure (an empty message, then the status).
      start(_metadata, listener) {
        setImmediate(() => {
          listener.onReceiveMessage(null);
          listener.onReceiveStatus({ code: RESOURCE_EXHAUSTED, details: CLOSING_TEXT, metadata: new Metadata() });
        });
      },
      sendMessage() {},
      halfClose() {},
    });
  };
  return { interceptor, refused: () => refused, updates: () => updates };
}

let env: TestEnv;
beforeAll(async () => {
  env = await startTestEnv({ name: 'closing-retry', modelFallback: () => ({ kind: 'text', text: 'ok' }) });
});
afterAll(async () => env?.close());

async function agentWith(retry: GrpcRetryOptions) {
  const injector = closingRunInjector();
  const connection = await Connection.connect({ address: env.config.temporal.address, interceptors: [makeGrpcRetryInterceptor(retry), injector.interceptor] });
  const client = new Client({ connection, namespace: env.config.temporal.namespace, dataConverter: dataConverterFor(env.config.encryption) });
  return { agent: new AgentClient({ client, taskQueue: env.taskQueue, principal: { tenant: 'acme', user: 'ana' } }), injector, connection };
}

/** Starts a session (update-with-start), then times a second message: a plain update, which the injector refuses once. */
async function secondMessageMs(retry: GrpcRetryOptions): Promise<{ ms: number; refused: number; updates: number; turns: number; modelRequests: number }> {
  const { agent, injector, connection } = await agentWith(retry);
  try {
    const sessionId = uniqueId('closing');
    const options = sessionOptions(sessionId);
    await agent.ask(options, { text: 'first' });
    const started = performance.now();
    const second = await agent.ask(options, { text: 'second' });
    const ms = performance.now() - started;
    expect(second.turn).toMatchObject({ outcome: 'completed', text: 'ok' });
    const view = await env.agent.getSession(sessionId);
    return { ms, refused: injector.refused(), updates: injector.updates(), turns: view.counters.turns, modelRequests: env.model.requestsFor(sessionId).length };
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

  it('is retried after 25 ms, doubling; every other status keeps the SDK back-off and the SDK decides what is retried', () => {
    const ours = sessionRetryOptions();
    const sdk = defaultGrpcRetryOptions();
    const closing = status(RESOURCE_EXHAUSTED, CLOSING_TEXT);
    expect([1, 2, 3].map((a) => ours.delayFunction(a, closing))).toEqual([CLOSING_RETRY_FIRST_MS, 2 * CLOSING_RETRY_FIRST_MS, 4 * CLOSING_RETRY_FIRST_MS]);
    expect(ours.delayFunction(20, closing)).toBe(1_000);
    // The SDK's own back-off for the code (1 s x 1.7, +-20% jitter) for a refusal that is load.
    expect(ours.delayFunction(1, status(RESOURCE_EXHAUSTED, 'namespace rate limit exceeded'))).toBeGreaterThanOrEqual(1_700 * 0.8);
    for (const s of [closing, status(14, 'unavailable'), status(3, 'invalid argument')]) {
      for (const attempt of [1, 9, 10]) expect(ours.retryableDecider(attempt, s)).toBe(sdk.retryableDecider(attempt, s));
    }
  });

  it('goes again within a few tens of ms and runs once, where the SDK default waits about 1.7 s', async () => {
    const ours = await secondMessageMs(sessionRetryOptions());
    const sdk = await secondMessageMs(defaultGrpcRetryOptions());
    for (const r of [ours, sdk]) {
      // Refused once, sent again once, and the turn ran once.
      expect(r).toMatchObject({ refused: 1, updates: 2, turns: 2, modelRequests: 2 });
    }
    expect(sdk.ms).toBeGreaterThan(1_300);
    expect(ours.ms).toBeLessThan(sdk.ms - 1_000);
  });
});
