import { Connection, isGrpcServiceError, type Client, type TLSConfig } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { NoWorkerError, TemporalCallTimeoutError, TemporalUnreachableError } from './errors';
import { sessionConnectionInterceptors } from './run-closing-retry';

/** How long a call that should answer promptly (query, signal, update accepted) may take. */
export const DEFAULT_CALL_TIMEOUT_MS = 10_000;
/** How long no worker may have polled before a long wait gives up: longer than a worker's long poll (about a minute). */
export const DEFAULT_WORKER_GONE_AFTER_MS = 150_000;
/** How long connecting to the server may take. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;

const GRPC_CANCELLED = 1;
const GRPC_DEADLINE_EXCEEDED = 4;
const GRPC_FAILED_PRECONDITION = 9;
const GRPC_UNAVAILABLE = 14;

/** The gRPC status of the first service error in the cause chain, if any. */
function grpcCode(err: unknown): number | undefined {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (isGrpcServiceError(e)) return e.code;
  }
  return undefined;
}

/**
 * A call whose answer was lost on the way, not refused: DEADLINE_EXCEEDED or
 * CANCELLED (the server cut a long wait, a connection was reset), or the
 * SDK's error for either on an update. A caller that knows the call is safe
 * to make again (an update with its own id, a read) sends it again.
 */
function wasCut(err: unknown): boolean {
  const code = grpcCode(err);
  return code === GRPC_DEADLINE_EXCEEDED || code === GRPC_CANCELLED || (err instanceof Error && err.name === 'WorkflowUpdateRPCTimeoutOrCancelledError');
}

/** How often a call cut short is sent again in a row (see `resend`), and the pause before each: 100 ms doubling. */
export const CUT_CALL_RESENDS = 5;
const resendPauseMs = (resends: number): number => 100 * 2 ** resends;

/** Per call: `resend` when the same call may be made again (an update carrying its own id, a read), so a cut one is. */
export interface CallOptions {
  resend?: boolean;
  /** Told before each call sent again after a cut. */
  onResend?: () => void;
}

function causeText(err: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (e.message && !parts.some((p) => p.includes(e.message))) parts.push(e.message);
  }
  return parts.join(': ');
}

/** The error a call stopped by its caller's `signal` throws: the signal's reason, or one naming the call. */
export function stoppedBy(signal: AbortSignal, operation: string): Error {
  return signal.reason instanceof Error ? signal.reason : new Error(`${operation}: stopped by the caller`);
}

/** Waits `ms`, or less when `signal` aborts (then resolves at once). */
export function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** The address a client's connection dials, for error messages (never carries credentials: host:port only). */
export function addressOf(client: Client): string {
  return client.connection instanceof Connection ? client.connection.options.address : '(the configured Temporal address)';
}

/** Connects, bounded by `timeoutMs`; a server that does not answer becomes a TemporalUnreachableError naming the address. */
export async function connectBounded(
  address: string,
  timeoutMs = DEFAULT_CONNECT_TIMEOUT_MS,
  transport: { tls?: TLSConfig | boolean; apiKey?: string } = {},
): Promise<Connection> {
  const started = Date.now();
  // An API key needs TLS (Temporal Cloud); without one and without TLS settings, plain TCP.
  const tls = transport.tls ?? (transport.apiKey ? true : undefined);
  try {
    return await Connection.connect({
      address,
      connectTimeout: timeoutMs,
      interceptors: sessionConnectionInterceptors(),
      ...(tls !== undefined && tls !== false ? { tls } : {}),
      ...(transport.apiKey ? { apiKey: transport.apiKey } : {}),
    });
  } catch (err) {
    throw new TemporalUnreachableError(address, 'connecting', Date.now() - started, causeText(err));
  }
}

/**
 * Puts every client call under a deadline. Prompt calls get an absolute one;
 * calls that legitimately wait long (a turn, an event stream, a memory
 * workflow) keep waiting only while the server proves alive, checked every
 * `callTimeoutMs`. Either way a dead server becomes a TemporalUnreachableError
 * naming the address, within about one `callTimeoutMs`.
 */
export class CallDeadline {
  readonly address: string;

  constructor(
    private readonly client: Client,
    private readonly taskQueue: string,
    readonly callTimeoutMs: number,
    /** How long no worker may have polled the task queue before a long wait gives up (DEFAULT_WORKER_GONE_AFTER_MS). */
    readonly workerGoneAfterMs = DEFAULT_WORKER_GONE_AFTER_MS,
  ) {
    this.address = addressOf(client);
  }

  /**
   * Has a worker polled the task queue within `workerGoneAfterMs`? A live
   * worker polls again at least every minute or so (its long poll), and the
   * server lists a poller by the time its last poll began. Undefined when
   * the server does not say (an error, or a caller without the permission):
   * the wait goes on.
   */
  async workersPolling(): Promise<boolean | undefined> {
    try {
      const res = await this.client.withDeadline(Date.now() + this.callTimeoutMs, () =>
        this.client.workflowService.describeTaskQueue({
          namespace: this.client.options.namespace,
          taskQueue: { name: this.taskQueue },
          taskQueueType: temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
        }),
      );
      const newest = Math.max(0, ...(res.pollers ?? []).map((p) => Number(p.lastAccessTime?.seconds ?? 0) * 1000 + Math.floor((p.lastAccessTime?.nanos ?? 0) / 1e6)));
      return Date.now() - newest < this.workerGoneAfterMs;
    } catch {
      return undefined;
    }
  }

  /**
   * A call that should answer promptly: absolute deadline of `callTimeoutMs`.
   * With `resend`, a call cut short before then is made again within it.
   */
  async prompt<T>(operation: string, fn: () => Promise<T>, options: CallOptions = {}): Promise<T> {
    const started = Date.now();
    const deadline = started + this.callTimeoutMs;
    for (let resends = 0; ; resends++) {
      try {
        return await this.client.withDeadline(deadline, fn);
      } catch (err) {
        // Our own deadline passing is not a cut: the call took too long.
        if (options.resend && resends < CUT_CALL_RESENDS && wasCut(err) && Date.now() + resendPauseMs(resends) < deadline) {
          await pause(resendPauseMs(resends));
          options.onResend?.();
          continue;
        }
        throw await this.explain(operation, err, started);
      }
    }
  }

  /**
   * A call that may wait long: no absolute deadline, but it gives up once the server stops answering,
   * or once `signal` (the caller's) aborts.
   */
  async watched<T>(operation: string, fn: () => Promise<T>, signal?: AbortSignal, options: CallOptions = {}): Promise<T> {
    const started = Date.now();
    let resends = 0;
    for (;;) {
      // Already stopped: nothing starts (the SDK cancels a call only when its signal fires, which this one will not again).
      if (signal?.aborted) throw stoppedBy(signal, operation);
      const controller = new AbortController();
      const stop = (): void => controller.abort();
      signal?.addEventListener('abort', stop, { once: true });
      const attempt = Date.now();
      const work = this.client.withAbortSignal(controller.signal, fn);
      try {
        return await this.whileAlive(operation, work, started, controller);
      } catch (err) {
        // Stopped by the caller: said as it is, at once (no health check, no timeout blamed on a worker).
        if (signal?.aborted) throw err;
        // With `resend`, a call the server or the network cut short (not the caller, not a dead server) is made
        // again; a wait cut after a long while counts as the first cut again.
        if (Date.now() - attempt > this.callTimeoutMs) resends = 0;
        if (options.resend && resends < CUT_CALL_RESENDS && wasCut(err) && (await this.serverAnswers())) {
          await pause(resendPauseMs(resends), signal);
          resends += 1;
          options.onResend?.();
          continue;
        }
        throw await this.explain(operation, err, started);
      } finally {
        signal?.removeEventListener('abort', stop);
        controller.abort();
      }
    }
  }

  /** Waits for `work` (e.g. the next item of a stream), checking every `callTimeoutMs` that the server still answers. */
  async whileAlive<T>(operation: string, work: Promise<T>, started = Date.now(), controller?: AbortController): Promise<T> {
    const settled = work.then(
      () => true,
      () => true,
    );
    for (;;) {
      const tick = new AbortController();
      const done = await Promise.race([settled, pause(this.callTimeoutMs, tick.signal).then(() => false)]);
      tick.abort();
      if (done) return work;
      if (!(await this.serverAnswers())) {
        controller?.abort();
        // The abandoned call may still reject later; that rejection has no reader.
        work.catch(() => undefined);
        throw new TemporalUnreachableError(this.address, operation, Date.now() - started, 'no answer to a health check');
      }
      // The server answers, but a turn or an update needs a worker: with none polling, the wait would never end.
      if ((await this.workersPolling()) === false) {
        controller?.abort();
        work.catch(() => undefined);
        throw new TemporalCallTimeoutError(operation, Date.now() - started, this.address, this.taskQueue);
      }
    }
  }

  /**
   * Does the server answer at all? A cheap call, retried until one call
   * timeout has passed: on a loaded machine one answer can be late or one
   * connection attempt refused without the server being gone, and calling a
   * live server unreachable is worse than taking the whole budget to say a
   * dead one is. The budget is shared by the tries, so the verdict on a dead
   * server comes within one `callTimeoutMs` however the tries fail.
   */
  async serverAnswers(): Promise<boolean> {
    const deadline = Date.now() + this.callTimeoutMs;
    while (Date.now() < deadline) {
      try {
        await this.client.withDeadline(deadline, () => this.client.workflowService.getSystemInfo({}));
        return true;
      } catch {
        await new Promise((r) => setTimeout(r, Math.min(200, Math.max(0, deadline - Date.now()))));
      }
    }
    return false;
  }

  /** Turns a stalled or unavailable call into the typed error that says why; other errors pass through. */
  private async explain(operation: string, err: unknown, started: number): Promise<unknown> {
    if (err instanceof TemporalUnreachableError || err instanceof TemporalCallTimeoutError || err instanceof NoWorkerError) return err;
    const code = grpcCode(err);
    // A query once the server has noticed no worker polls (about 10 to 20 s after the last one left): refused at once.
    if (code === GRPC_FAILED_PRECONDITION && /no poller seen/i.test(causeText(err))) return new NoWorkerError(operation, this.address, this.taskQueue);
    const rpcGaveUp = err instanceof Error && err.name === 'WorkflowUpdateRPCTimeoutOrCancelledError';
    if (code === GRPC_UNAVAILABLE) return new TemporalUnreachableError(this.address, operation, Date.now() - started, causeText(err));
    // A call cancelled on the way (grpc-js says "Call cancelled", as when the deadline passes mid-retry) is told
    // like one that ran out of time: it may still take effect.
    if (code !== GRPC_DEADLINE_EXCEEDED && code !== GRPC_CANCELLED && !rpcGaveUp) return err;
    if (!(await this.serverAnswers())) return new TemporalUnreachableError(this.address, operation, Date.now() - started, causeText(err));
    return new TemporalCallTimeoutError(operation, this.callTimeoutMs, this.address, this.taskQueue);
  }
}
