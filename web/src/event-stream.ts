import { EventSourceParserStream } from 'eventsource-parser/stream';
import { networkProblem, problemOf, type Problem } from './api';
import type { AgentEvent } from './api-types';

export type StreamState = 'connecting' | 'live' | 'reconnecting' | 'ended' | 'failed';

export interface StreamHandlers {
  /** Each event once, in offset order. */
  event(offset: number, event: AgentEvent): void;
  state(state: StreamState): void;
  /** The stream stopped for a reason a person should see (not a transient drop, which is retried). */
  problem(problem: Problem): void;
  /**
   * Events from `from` up to `to` (exclusive) are no longer kept (the tab was
   * away while the session moved on): the stream goes on from `to`.
   */
  gap?(from: number, to: number): void;
  /**
   * The offset asked for is past the session's stream (409 OffsetAhead): the
   * session started afresh since (its offsets from 0 again). The stream goes
   * on from 0; what was shown of the old start should be set aside.
   */
  restarted?(): void;
}

/** Where a TruncatedOffset problem says the kept events start, when it says so and that is ahead of `next`. */
function resumeAt(problem: Problem, next: number): number | undefined {
  const at = problem.earliestOffset;
  return problem.failureType === 'TruncatedOffset' && typeof at === 'number' && Number.isInteger(at) && at > next ? at : undefined;
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    }, { once: true });
  });

const isEvent = (value: unknown): value is AgentEvent => typeof value === 'object' && value !== null && typeof (value as { type?: unknown }).type === 'string';

/**
 * Follows a session's events from `fromOffset` until `signal` aborts or the
 * session's run ends. EventSource cannot send an Authorization header, so
 * this reads the stream with fetch. A dropped connection is resumed from the
 * offset after the last one seen, so nothing is lost or repeated.
 */
export async function followEvents(options: {
  sessionId: string;
  fromOffset: number;
  headers: Record<string, string>;
  signal: AbortSignal;
  handlers: StreamHandlers;
  /** A refused token: the person is signed out. */
  onUnauthorized(problem: Problem): void;
}): Promise<void> {
  const { handlers, signal } = options;
  let next = options.fromOffset;
  let failures = 0;
  handlers.state('connecting');
  while (!signal.aborted) {
    let dropped: Problem | undefined;
    try {
      const res = await fetch(`/v1/sessions/${encodeURIComponent(options.sessionId)}/events?from=${next}`, {
        headers: { accept: 'text/event-stream', ...options.headers },
        signal,
      });
      if (!res.ok || !res.body) {
        const problem = await problemOf(res);
        if (res.status === 401) return options.onUnauthorized(problem);
        const resume = resumeAt(problem, next);
        if (resume !== undefined) {
          handlers.gap?.(next, resume);
          next = resume;
          continue;
        }
        if (problem.failureType === 'OffsetAhead' && next > 0 && handlers.restarted) {
          handlers.restarted();
          next = 0;
          continue;
        }
        // Busy or unavailable: worth another try. Anything else will not change by retrying.
        if (res.status !== 429 && res.status < 500) {
          handlers.state('failed');
          return handlers.problem(problem);
        }
        dropped = problem;
      } else {
        handlers.state('live');
        // eventsource-parser splits the stream into messages (any of the spec's line ends; keep-alive comments skipped).
        const reader = res.body.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream()).getReader();
        let resumed = false;
        reading: for (;;) {
          const { value: m, done } = await reader.read();
          if (done) break;
          if (m.event === 'end') {
            handlers.state('ended');
            return;
          }
          if (m.event === 'problem') {
            const problem = problemFromStream(m.data);
            const resume = resumeAt(problem, next);
            if (resume !== undefined) {
              // Fell behind what the session keeps: go on from what it still has, saying what was missed.
              handlers.gap?.(next, resume);
              next = resume;
              resumed = true;
              break reading;
            }
            // The server could not read the session just now (Temporal or the workers busy): retried, as a
            // refused request of that kind is. Anything else will not change by retrying.
            if (problem.status !== 429 && problem.status < 500) {
              handlers.state('failed');
              return handlers.problem(problem);
            }
            dropped = problem;
            break reading;
          }
          const offset = Number(m.id);
          if (!Number.isInteger(offset) || offset < next) continue;
          let parsed: unknown;
          try {
            parsed = JSON.parse(m.data);
          } catch {
            continue;
          }
          if (!isEvent(parsed)) continue;
          next = offset + 1;
          // The backoff starts over once the stream delivers, not on an answer that fails straight away.
          failures = 0;
          handlers.event(offset, parsed);
        }
        if (resumed || dropped) await reader.cancel().catch(() => undefined);
        if (resumed) continue;
      }
    } catch (err) {
      if (signal.aborted) return;
      dropped = networkProblem(err);
    }
    if (signal.aborted) return;
    failures += 1;
    handlers.state('reconnecting');
    const waitMs = dropped?.retryAfterSeconds !== undefined ? dropped.retryAfterSeconds * 1000 : Math.min(5_000, 250 * 2 ** Math.min(failures, 5));
    await sleep(waitMs, signal);
  }
}

function problemFromStream(data: string): Problem {
  try {
    const body = JSON.parse(data) as Record<string, unknown>;
    return {
      status: typeof body.status === 'number' ? body.status : 500,
      title: 'The event stream stopped',
      detail: typeof body.detail === 'string' ? body.detail : 'The server ended the event stream with an error.',
      failureType: typeof body.failureType === 'string' ? body.failureType : 'StreamFailed',
      ...(typeof body.earliestOffset === 'number' ? { earliestOffset: body.earliestOffset } : {}),
      ...(typeof body.retryAfterSeconds === 'number' ? { retryAfterSeconds: body.retryAfterSeconds } : {}),
    };
  } catch {
    return { status: 500, title: 'The event stream stopped', detail: 'The server ended the event stream with an error.', failureType: 'StreamFailed' };
  }
}
