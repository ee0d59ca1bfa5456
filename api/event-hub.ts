import { TruncatedOffsetError, type AgentClient, type SessionEvent } from '../client';
import type { Principal } from '../workflows/principal';
import { ProblemError } from './problem';

/** What a reader of the hub is told. */
export interface FeedListener {
  event(e: SessionEvent): void;
  /** The session's stream ended (its workflow closed) or could not be read; `error` says why when it failed. */
  end(error?: unknown): void;
}

/** Events the server keeps per session it reads, for readers that resume. */
export const HUB_BUFFER_EVENTS = 5_000;
const LINGER_MS = 5_000;

/**
 * One reader of one session's event stream inside the server, fanned out to
 * every connected client: however many browsers watch a session, the
 * workflow sees one poller. Events are buffered (the last 5,000) so a client
 * that reconnects with Last-Event-ID resumes from memory.
 */
class SessionFeed {
  readonly buffer: SessionEvent[] = [];
  readonly listeners = new Set<FeedListener>();
  ended = false;
  endError: unknown;
  private linger: NodeJS.Timeout | undefined;
  private iterator: AsyncGenerator<SessionEvent> | undefined;
  /** Stops the read at once, even mid long-poll (a generator's return() would wait for it). */
  private readonly stopReading = new AbortController();

  constructor(
    private readonly reader: AgentClient,
    readonly sessionId: string,
    private readonly onClose: () => void,
  ) {}

  start(): void {
    this.iterator = this.reader.events(this.sessionId, { fromOffset: 0, signal: this.stopReading.signal });
    void this.pump();
  }

  private async pump(): Promise<void> {
    const it = this.iterator!;
    try {
      for (;;) {
        const next = await it.next();
        if (next.done) break;
        this.buffer.push(next.value);
        if (this.buffer.length > HUB_BUFFER_EVENTS) this.buffer.shift();
        for (const l of this.listeners) l.event(next.value);
      }
      this.finish();
    } catch (err) {
      this.finish(err);
    }
  }

  private finish(error?: unknown): void {
    if (this.ended) return;
    this.ended = true;
    this.endError = error;
    for (const l of this.listeners) l.end(error);
    this.listeners.clear();
    this.close();
  }

  /** First offset still buffered (undefined before the first event). */
  get firstOffset(): number | undefined {
    return this.buffer[0]?.offset;
  }

  add(listener: FeedListener): void {
    if (this.linger) clearTimeout(this.linger);
    this.linger = undefined;
    this.listeners.add(listener);
  }

  remove(listener: FeedListener): void {
    this.listeners.delete(listener);
    this.lingerIfIdle();
  }

  /** With nobody listening, closes after the linger time (unless someone comes back). */
  lingerIfIdle(): void {
    if (this.listeners.size === 0 && !this.ended && !this.linger) {
      // A reader reconnecting (a page reload) finds the feed still running.
      this.linger = setTimeout(() => this.close(), LINGER_MS);
      this.linger.unref?.();
    }
  }

  close(): void {
    if (this.linger) clearTimeout(this.linger);
    this.linger = undefined;
    this.onClose();
    this.stopReading.abort();
  }
}

export class EventHub {
  private readonly feeds = new Map<string, SessionFeed>();
  /** Subscriptions to workflows this hub opened (one per session while anyone watches). */
  subscriptionsOpened = 0;

  constructor(private readonly agent: AgentClient) {}

  /** Stops every feed (their pending polls are cancelled): call before closing the Temporal connection. */
  close(): void {
    for (const feed of [...this.feeds.values()]) feed.close();
  }

  /** Feeds currently open (sessions someone watches, or watched within the linger time). */
  get openFeeds(): number {
    return this.feeds.size;
  }

  /** Whether the hub follows `sessionId` now: someone watches it, or did within the linger time. */
  follows(sessionId: string): boolean {
    const feed = this.feeds.get(sessionId);
    return feed !== undefined && !feed.ended;
  }

  /**
   * Delivers the session's events from `fromOffset` on, then live ones, to
   * `listener`. The caller has checked read access; the hub reads as the
   * session's owner. Returns the function that stops the delivery.
   */
  subscribe(sessionId: string, owner: Pick<Principal, 'tenant' | 'user'>, fromOffset: number, listener: FeedListener): () => void {
    let feed = this.feeds.get(sessionId);
    if (!feed || feed.ended) {
      feed = new SessionFeed(this.agent.as({ tenant: owner.tenant, user: owner.user }), sessionId, () => {
        if (this.feeds.get(sessionId) === feed) this.feeds.delete(sessionId);
      });
      this.feeds.set(sessionId, feed);
      this.subscriptionsOpened += 1;
      feed.start();
    }
    const f = feed;
    // The feed reads from the earliest event the session keeps: an offset before its first one is gone.
    const earliest = f.firstOffset;
    if (fromOffset > 0 && earliest !== undefined && fromOffset < earliest) {
      f.lingerIfIdle();
      throw new TruncatedOffsetError(sessionId, fromOffset, earliest);
    }
    // Replay what the buffer holds from the asked offset, then stay for live events (in order, no duplicates).
    let last = fromOffset - 1;
    let stopped = false;
    const forward: FeedListener = {
      event: (e) => {
        if (stopped || e.offset <= last) return;
        if (fromOffset > 0 && last === fromOffset - 1 && e.offset > fromOffset) {
          // The first event the feed has for this reader is later than asked: the ones between are gone.
          stopped = true;
          listener.end(new TruncatedOffsetError(sessionId, fromOffset, e.offset));
          return;
        }
        last = e.offset;
        listener.event(e);
      },
      end: (error) => {
        if (stopped) return;
        // The shared reader fell behind what the session keeps (it was catching up when the run continued as new),
        // but this reader had already got everything before the earliest kept event: it missed nothing, and
        // reconnecting from where it is starts a new shared reader.
        if (error instanceof TruncatedOffsetError && error.earliestOffset <= last + 1) {
          listener.end(new ProblemError(503, 'StreamRestarting', `The server's reader of session ${sessionId} fell behind and stopped; nothing of yours was lost. Reconnect from event ${last + 1}.`, { retryAfterSeconds: 1 }));
          return;
        }
        listener.end(error);
      },
    };
    for (const e of f.buffer) forward.event(e);
    f.add(forward);
    return () => f.remove(forward);
  }
}
