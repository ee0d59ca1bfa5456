import { defaultGrpcRetryOptions, makeGrpcRetryInterceptor, type ConnectionOptions, type GrpcRetryOptions } from '@temporalio/client';

type Interceptor = NonNullable<ConnectionOptions['interceptors']>[number];
type GrpcStatusObject = Parameters<GrpcRetryOptions['delayFunction']>[1];

/** gRPC's RESOURCE_EXHAUSTED. */
const RESOURCE_EXHAUSTED = 8;

/**
 * The server's answer to an update or signal that reaches a run while it is
 * closing with a continue-as-new: RESOURCE_EXHAUSTED with this text (a run
 * that ends without a next one answers "workflow execution already
 * completed" instead). It lasts until the workflow task that continues the
 * run completes, usually a few milliseconds; a slow or dead worker can
 * stretch it to the workflow task timeout. The same call sent again then
 * lands on the next run.
 */
const RUN_CLOSING = /workflow is closing/i;

/** First retry of a refusal because the run is closing, doubling up to `CLOSING_RETRY_MAX_MS`, each +-20%. */
export const CLOSING_RETRY_FIRST_MS = 25;
export const CLOSING_RETRY_MAX_MS = 5_000;
/**
 * Tries in all for that refusal: the delays then add up to about 41 s,
 * about what the SDK's ten tries at its back-off span (39 s), so a run that
 * stays closing for a whole workflow task timeout is still waited out.
 */
export const CLOSING_RETRY_ATTEMPTS = 16;

export function isRunClosing(s: Pick<GrpcStatusObject, 'code' | 'details'>): boolean {
  return s.code === RESOURCE_EXHAUSTED && RUN_CLOSING.test(s.details ?? '');
}

const jitter = (): number => 0.8 + Math.random() * 0.4;

/**
 * The SDK's retry of failed calls, with one change. The SDK backs off
 * RESOURCE_EXHAUSTED from 1 s times 1.7, as it would a server under load, so
 * a message that reached a session while it was continuing as new waited
 * about 1.7 s before it went again (docs/performance.md, "What the freezes
 * were"). That refusal is no load: the next run is usually there within one
 * workflow task, so it is retried after 25 ms, doubling to 5 s, over as long
 * a span as the SDK's. Every other status, and which statuses are retried,
 * stay the SDK's.
 */
export function sessionRetryOptions(base: GrpcRetryOptions = defaultGrpcRetryOptions()): GrpcRetryOptions {
  return {
    retryableDecider: (attempt, s) => (isRunClosing(s) ? attempt < CLOSING_RETRY_ATTEMPTS : base.retryableDecider(attempt, s)),
    delayFunction: (attempt, s) => (isRunClosing(s) ? Math.min(CLOSING_RETRY_MAX_MS, CLOSING_RETRY_FIRST_MS * 2 ** (attempt - 1)) * jitter() : base.delayFunction(attempt, s)),
  };
}

/**
 * The gRPC interceptors for a `Connection` that talks to sessions: the SDK's
 * retry with `sessionRetryOptions`. `AgentClient.connect` uses them; pass
 * them as `Connection.connect({ interceptors: sessionConnectionInterceptors() })`
 * when you build the connection yourself (they replace the SDK's default
 * retry interceptor, so add your own after them).
 */
export function sessionConnectionInterceptors(): Interceptor[] {
  return [makeGrpcRetryInterceptor(sessionRetryOptions())];
}
