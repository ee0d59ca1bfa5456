import type { RecordedRequest } from './scenario';

export interface WaitOptions {
  /** Default 5000. */
  timeoutMs?: number;
}

const DEFAULT_WAIT_MS = 5_000;

/**
 * Every request the server saw, in arrival order, plus waiting on it.
 * Records are mutated in place as requests finish or abort, so a waiter is
 * woken on every change, not only on arrivals.
 */
export class RequestLog {
  readonly all: RecordedRequest[] = [];
  private readonly waiters = new Set<() => void>();

  add(record: RecordedRequest): void {
    this.all.push(record);
    this.changed();
  }

  changed(): void {
    for (const wake of [...this.waiters]) wake();
  }

  forLane(lane: string): RecordedRequest[] {
    return this.all.filter((record) => record.lane === lane);
  }

  clear(): void {
    // In place: callers may hold the array from `server.requests`.
    this.all.length = 0;
    this.changed();
  }

  waitUntil(
    predicate: (requests: readonly RecordedRequest[]) => boolean,
    describe: () => string,
    options: WaitOptions = {},
  ): Promise<void> {
    if (predicate(this.all)) return Promise.resolve();
    const timeoutMs = options.timeoutMs ?? DEFAULT_WAIT_MS;
    return new Promise((resolve, reject) => {
      const finish = (error?: Error): void => {
        clearTimeout(timer);
        this.waiters.delete(check);
        if (error === undefined) resolve();
        else reject(error);
      };
      const check = (): void => {
        if (predicate(this.all)) finish();
      };
      const timer = setTimeout(
        () => finish(new Error(`scripted model: timed out after ${timeoutMs} ms waiting for ${describe()}`)),
        timeoutMs,
      );
      this.waiters.add(check);
    });
  }
}
