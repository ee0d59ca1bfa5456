import type { AgentClient, SessionEvent } from '../agent-client';
import type { AgentEvent } from '../../workflows/events';

interface Waiter {
  match: (event: AgentEvent) => boolean;
  resolve: (event: AgentEvent) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
}

export interface SessionFeedOptions {
  fromOffset?: number;
  /** Called for each event, in stream order, before any waiter sees it. */
  onEvent?: (event: AgentEvent, offset: number) => void;
}

/**
 * Reads a session's event stream in the background, hands each event to
 * `onEvent`, keeps them, and lets the caller wait for one that matches.
 * Ends when the session's workflow ends; a broken stream fails every waiter.
 */
export class SessionFeed {
  /** Every event read so far, in order. */
  readonly events: AgentEvent[] = [];
  /**
   * Settles when reading stops: `ended` when the workflow run closed, `closed`
   * when the caller stopped it (`stop`, `closeAfter`); rejects when reading fails.
   */
  readonly finished: Promise<'ended' | 'closed'>;
  private readonly waiters = new Set<Waiter>();
  private iterator: AsyncGenerator<SessionEvent> | null = null;
  private failure: Error | null = null;
  private ended = false;
  private lastOffset = -1;
  private closeWhen: ((event: AgentEvent) => boolean) | null = null;

  constructor(
    private readonly agent: AgentClient,
    readonly sessionId: string,
    private readonly options: SessionFeedOptions = {},
  ) {
    this.finished = this.run();
    // Callers that never await `finished` still learn of a failure through their waiters.
    this.finished.catch(() => undefined);
  }

  /** Offset of the last event read, -1 before the first. */
  get offset(): number {
    return this.lastOffset;
  }

  /**
   * The first event from index `since` of `events` on (default: all of them)
   * that matches, waiting for it if it has not arrived.
   */
  waitFor(match: (event: AgentEvent) => boolean, options: { timeoutMs: number; what: string; since?: number }): Promise<AgentEvent> {
    const seen = this.events.slice(options.since ?? 0).find(match);
    if (seen) return Promise.resolve(seen);
    if (this.failure) return Promise.reject(this.failure);
    if (this.ended) return Promise.reject(new Error(`session ${this.sessionId} ended before ${options.what}`));
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        match,
        resolve,
        reject,
        timer: setTimeout(() => {
          this.waiters.delete(waiter);
          reject(new Error(`no ${options.what} after ${Math.round(options.timeoutMs / 1000)} s on session ${this.sessionId}`));
        }, options.timeoutMs),
      };
      this.waiters.add(waiter);
    });
  }

  /**
   * Stops reading right after the first event that matches, before another
   * poll is sent. Use it before ending a session: a poll parked in the
   * workflow keeps the session from closing (see the note in the report).
   */
  closeAfter(match: (event: AgentEvent) => boolean): void {
    this.closeWhen = match;
  }

  /** Stops reading. Does not wait: a pending long poll is abandoned, not awaited. */
  stop(): void {
    this.ended = true;
    void this.iterator?.return(undefined).catch(() => undefined);
    this.settle(new Error(`stopped reading session ${this.sessionId}`));
  }

  private async run(): Promise<'ended' | 'closed'> {
    this.iterator = this.agent.events(this.sessionId, { fromOffset: this.options.fromOffset ?? 0 });
    try {
      for await (const { offset, event } of this.iterator) {
        if (this.ended) return 'closed';
        this.lastOffset = offset;
        this.events.push(event);
        this.options.onEvent?.(event, offset);
        for (const waiter of [...this.waiters]) {
          if (!waiter.match(event)) continue;
          clearTimeout(waiter.timer);
          this.waiters.delete(waiter);
          waiter.resolve(event);
        }
        // Leaving the loop here returns the generator while it sits at a yield: no further poll goes out.
        if (this.closeWhen?.(event)) return 'closed';
      }
      return 'ended';
    } catch (err) {
      const error = err instanceof Error ? err : new Error(String(err));
      this.failure = new Error(`reading the events of session ${this.sessionId} failed: ${error.message}`, { cause: error });
      throw this.failure;
    } finally {
      this.ended = true;
      this.settle(this.failure ?? new Error(`stopped reading session ${this.sessionId}`));
    }
  }

  private settle(error: Error): void {
    for (const waiter of this.waiters) {
      clearTimeout(waiter.timer);
      waiter.reject(error);
    }
    this.waiters.clear();
  }
}
