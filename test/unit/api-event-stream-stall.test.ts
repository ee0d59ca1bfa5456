import { get as httpGet, type IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import { mintToken, TokenBook } from '../../api/auth';
import { createApi, listen, type ApiLimits } from '../../api/server';
import { readSseEvents, type SseEvent } from '../../api/sse-reader';
import { scrape, total } from '../../api/prometheus-text';
import type { AgentClient, SessionEvent } from '../../client';

/*
 * An event stream whose reader stops reading. The HTTP server, its sockets
 * and both readers are real; the session behind the stream is a fault
 * injector that streams events of 64 KB faster than any session would, so
 * the sockets fill (the kernel holds about 4 MB) in a second rather than
 * over hours of a real session.
 */

const SESSION = 'stall-1';
const EVENT_CHARS = 64_000;

/** Streams `count` big events at once, then stays open (a session still running) until the reader stops. */
function floodingAgent(count: number, owner = { tenant: 'acme', user: 'ana' }, progress = { published: 0 }): AgentClient {
  const events = async function* (_sessionId: string, opts: { fromOffset?: number; signal?: AbortSignal }): AsyncGenerator<SessionEvent> {
    for (let offset = opts.fromOffset ?? 0; offset < count; offset++) {
      progress.published = offset + 1;
      yield { offset, event: { type: 'text_delta', sessionId: SESSION, at: new Date(0).toISOString(), turnId: 'turn-1', step: 1, attempt: 1, delta: `${offset}:`.padEnd(EVENT_CHARS, 'x') } };
      if (offset % 16 === 15) await new Promise((r) => setImmediate(r));
    }
    await new Promise<void>((resolve) => {
      if (opts.signal?.aborted) resolve();
      opts.signal?.addEventListener('abort', () => resolve(), { once: true });
    });
  };
  const agent = {
    as: () => agent,
    events,
    getSession: async () => ({ sessionId: SESSION, owner, namespace: owner, version: 1 }),
    // All `count` events are published at once.
    nextEventOffset: async () => count,
  };
  return agent as unknown as AgentClient;
}

async function serve(count: number, limits: Partial<ApiLimits>, progress = { published: 0 }) {
  const { token, entry } = mintToken({ tenant: 'acme', user: 'ana' });
  const lines: string[] = [];
  const api = createApi({ agent: floodingAgent(count, undefined, progress), tokens: new TokenBook([entry]), limits: { streamsPerPrincipal: 1, ...limits }, log: (l) => lines.push(l) });
  const server = await listen(api.app, 0);
  return {
    token,
    lines,
    url: server.url,
    close: async () => {
      api.hub.close();
      await server.close();
    },
  };
}

/** node:http, not fetch: a response nobody reads stops reading its socket (fetch's body keeps buffering). */
function openUnread(url: string, token: string, headers: Record<string, string> = {}): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    httpGet(url, { headers: { authorization: `Bearer ${token}`, ...headers } }, resolve).on('error', reject);
  });
}

/** Everything the response holds, up to where the server cut it. */
async function readAll(res: IncomingMessage, until?: (e: SseEvent) => boolean): Promise<SseEvent[]> {
  const got: SseEvent[] = [];
  try {
    for await (const e of readSseEvents(Readable.toWeb(res) as ReadableStream<Uint8Array>)) {
      got.push(e);
      if (until?.(e)) break;
    }
  } catch {
    // Cut by the server's close ("aborted"): what came before it stands.
  }
  res.destroy();
  return got;
}

async function waitFor(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const eventsPath = `/v1/sessions/${SESSION}/events`;

describe('an event stream whose reader stops reading', () => {
  it('is closed after the stall time, its slot freed; resuming with Last-Event-ID gets every event once, in order', async () => {
    const count = 160; // about 10 MB
    const s = await serve(count, { streamStallMs: 500 });
    try {
      const stalled = await openUnread(`${s.url}${eventsPath}`, s.token);
      expect(stalled.statusCode).toBe(200);
      await waitFor('the stalled stream to be closed', () => s.lines.some((l) => l.includes('its reader took nothing for 500 ms')));
      expect(s.lines.join('\n')).not.toContain(s.token);
      const metrics = await scrape(`${s.url}/metrics`);
      expect(total(metrics, 'agent_api_event_streams_dropped_total', { reason: 'stalled' })).toBe(1);
      expect(total(metrics, 'agent_api_event_streams', {})).toBe(0);
      // The one slot is free again, although the stalled reader has not read a byte.
      const other = await openUnread(`${s.url}${eventsPath}?from=${count - 1}`, s.token);
      expect(other.statusCode).toBe(200);
      other.destroy();

      const got = await readAll(stalled);
      expect(got.length).toBeGreaterThan(10);
      expect(got.length).toBeLessThan(count);
      expect(got.some((e) => e.event === 'end' || e.event === 'problem')).toBe(false);
      await waitFor('the slot to free up', async () => total(await scrape(`${s.url}/metrics`), 'agent_api_event_streams', {}) === 0);
      const rest = await readAll(await openUnread(`${s.url}${eventsPath}`, s.token, { 'last-event-id': got.at(-1)!.id! }), (e) => e.id === String(count - 1));
      const ids = [...got, ...rest].map((e) => Number(e.id));
      expect(ids).toEqual(Array.from({ length: count }, (_, i) => i));
      expect([...got, ...rest].every((e, i) => JSON.parse(e.data).delta.startsWith(`${i}:`))).toBe(true);
    } finally {
      await s.close();
    }
  }, 60_000);

  it('is closed when it falls more events behind than it may hold, even while the stall time has not passed', async () => {
    const s = await serve(400, { streamStallMs: 600_000, streamQueueEvents: 100 });
    try {
      const stalled = await openUnread(`${s.url}${eventsPath}`, s.token);
      await waitFor('the lagging stream to be closed', () => s.lines.some((l) => /its reader fell \d+ events behind/.test(l)));
      const metrics = await scrape(`${s.url}/metrics`);
      expect(total(metrics, 'agent_api_event_streams_dropped_total', { reason: 'behind' })).toBe(1);
      expect(total(metrics, 'agent_api_event_streams_dropped_total', { reason: 'stalled' })).toBe(0);
      await waitFor('the slot to free up', async () => total(await scrape(`${s.url}/metrics`), 'agent_api_event_streams', {}) === 0);
      stalled.destroy();
    } finally {
      await s.close();
    }
  }, 60_000);

  it("a new reader is handed what the server holds of the session at once, even more than a stream may fall behind: it is not closed for it", async () => {
    const count = 400;
    const progress = { published: 0 };
    const s = await serve(count, { streamStallMs: 600_000, streamQueueEvents: 100, streamsPerPrincipal: 2 }, progress);
    try {
      // A first reader starts the server's feed of the session, which then holds all 400 events for later readers
      // (whatever became of this reader, which reads nothing: it goes before the second comes).
      const first = await openUnread(`${s.url}${eventsPath}`, s.token);
      await waitFor('the session to publish every event', () => progress.published === count);
      await new Promise((r) => setTimeout(r, 200));
      first.destroy();
      const before = s.lines.length;
      const second = await readAll(await openUnread(`${s.url}${eventsPath}`, s.token), (e) => e.id === String(count - 1));
      expect(second.map((e) => Number(e.id))).toEqual(Array.from({ length: count }, (_, i) => i));
      expect(s.lines.slice(before)).toEqual([]);
    } finally {
      await s.close();
    }
  }, 60_000);

  it('a reader that keeps up is not closed when the server itself stops running for longer than the stall time (a pause, not the reader)', async () => {
    const count = 160;
    const s = await serve(count, { streamStallMs: 500 });
    try {
      let paused = false;
      const got = await readAll(await openUnread(`${s.url}${eventsPath}`, s.token), (e) => {
        if (!paused && e.id === '20') {
          // The whole process (server and reader alike) runs nothing for 1.2 s, as in a long GC pause or on a starved
          // CPU, while the server's write of the next big event waits for the reader.
          paused = true;
          const until = Date.now() + 1_200;
          while (Date.now() < until);
        }
        return e.id === String(count - 1);
      });
      expect(paused).toBe(true);
      expect(got.map((e) => Number(e.id))).toEqual(Array.from({ length: count }, (_, i) => i));
      expect(s.lines).toEqual([]);
    } finally {
      await s.close();
    }
  }, 60_000);

  it('a reader that keeps up is never closed, however long a write of a big event takes', async () => {
    const count = 160;
    const s = await serve(count, { streamStallMs: 500 });
    try {
      const got = await readAll(await openUnread(`${s.url}${eventsPath}`, s.token), (e) => e.id === String(count - 1));
      expect(got.map((e) => Number(e.id))).toEqual(Array.from({ length: count }, (_, i) => i));
      expect(s.lines).toEqual([]);
    } finally {
      await s.close();
    }
  }, 60_000);
});
