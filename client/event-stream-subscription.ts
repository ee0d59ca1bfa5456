import { WorkflowStreamClient } from '@temporalio/workflow-streams/client';
import type { Client } from '@temporalio/client';

/** What subscribe() keeps of the run it follows (TypeScript-private in the library). */
interface RunTracking {
  polledRunId: string | undefined;
  followContinueAsNew(): Promise<boolean>;
}

/**
 * A stream client for one session's workflow whose subscribe() ends when the
 * session's last run closes, however quickly that run closed.
 *
 * @temporalio/workflow-streams 1.23.0 (pinned) follows a continue-as-new by
 * describing the run its last poll was admitted to, and keeps that run id
 * after moving on. When the next run closes before any poll is admitted to
 * it (a session ended or archived right after continuing as new), each poll
 * fails because the workflow is closed, the old run still says
 * CONTINUED_AS_NEW, and subscribe() polls again at once, forever: the reader
 * gets nothing more, never reaches the archive, and spins against the
 * server. Forgetting the old run once it has been followed makes the next
 * check describe the latest run, which says the stream is over.
 */
export function sessionStreamClient(client: Client, workflowId: string): WorkflowStreamClient {
  const stream = WorkflowStreamClient.create(client, workflowId);
  const tracking = stream as unknown as RunTracking;
  if (typeof tracking.followContinueAsNew !== 'function') return stream;
  const follow = tracking.followContinueAsNew.bind(stream);
  tracking.followContinueAsNew = async () => {
    const moved = await follow();
    if (moved) tracking.polledRunId = undefined;
    return moved;
  };
  return stream;
}

/**
 * The run the stream client's last poll was admitted to (undefined before
 * the first, and right after it followed a continue-as-new).
 */
export function polledRunOf(stream: WorkflowStreamClient): string | undefined {
  return (stream as unknown as RunTracking).polledRunId;
}

/**
 * A signal for `client.withAbortSignal` that also cancels calls started
 * after it fired. The SDK (1.23.0) cancels a call by listening for the
 * signal's `abort` event, which a signal that already fired never sends
 * again. The stream library sleeps 100 ms between polls: a reader stopped
 * during that pause sent one more poll, uncancelled, which waited for the
 * session's next event (for ever on an idle session), and the reader with it.
 */
export function cancelsLateCalls(signal: AbortSignal): AbortSignal {
  return new Proxy(signal, {
    get(target, prop) {
      if (prop === 'addEventListener') {
        return (...args: Parameters<AbortSignal['addEventListener']>) => {
          const [type, listener] = args;
          if (type === 'abort' && target.aborted) {
            const event = new Event('abort');
            queueMicrotask(() => (typeof listener === 'function' ? listener.call(target, event) : listener?.handleEvent(event)));
            return;
          }
          target.addEventListener(...args);
        };
      }
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/**
 * A signal for one call, linked to a reader's long-lived `stop` until
 * `release()`: the SDK adds an abort listener per call and never removes
 * it, so a reader that lives for hours must not hand it one long-lived
 * signal. The signal also cancels calls started after it fired
 * (`cancelsLateCalls`).
 */
export function callLinkedTo(stop: AbortSignal): { signal: AbortSignal; abort(): void; release(): void } {
  const controller = new AbortController();
  const abort = (): void => controller.abort();
  stop.addEventListener('abort', abort, { once: true });
  return { signal: cancelsLateCalls(controller.signal), abort, release: () => stop.removeEventListener('abort', abort) };
}
