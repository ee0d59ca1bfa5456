/** Delay before reconnect attempt `attempt` (0-based): exponential, capped, with ±20% jitter so workers do not stampede. */
export function backoffDelay(attempt: number, initialMs: number, maxMs: number, random: () => number = Math.random): number {
  const base = Math.min(maxMs, initialMs * 2 ** Math.min(attempt, 30));
  return Math.round(base * (0.8 + 0.4 * random()));
}

export class TimeoutError extends Error {
  override readonly name = 'TimeoutError';
}

/** Resolves with `work`, or rejects with a TimeoutError after `ms` (calling `onTimeout` to clean up). */
export async function withTimeout<T>(work: Promise<T>, ms: number, message: string, onTimeout?: () => void): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      onTimeout?.();
      reject(new TimeoutError(message));
    }, ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Resolves true when the registered wake-up is called within `ms`, false on timeout or when `signal` aborts. */
export function waitFor(register: (wake: () => void) => () => void, ms: number, signal?: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    let done = false;
    const finish = (value: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      unregister();
      signal?.removeEventListener('abort', onAbort);
      resolve(value);
    };
    const onAbort = () => finish(false);
    const timer = setTimeout(() => finish(false), ms);
    const unregister = register(() => finish(true));
    signal?.addEventListener('abort', onAbort, { once: true });
    if (signal?.aborted) finish(false);
  });
}
