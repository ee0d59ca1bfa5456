import { existsSync } from 'node:fs';
import path from 'node:path';
import { serve, type ServerType } from '@hono/node-server';
import { serveStatic } from '@hono/node-server/serve-static';
import { OpenAPIHono } from '@hono/zod-openapi';
import type { Context, MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { HTTPException } from 'hono/http-exception';
import { streamSSE, type SSEStreamingApi } from 'hono/streaming';
import type { ServerResponse } from 'node:http';
import { NotAuthorizedError, OffsetAheadError, SessionNotFoundError, type AgentClient, type SessionEvent } from '../client';
import { hasTenantRole, type Principal } from '../workflows/principal';
import type { ApiTokenEntry, TokenBook } from './auth';
import { EventHub, HUB_BUFFER_EVENTS } from './event-hub';
import { ApiMetrics } from './metrics';
import type { MetricsHistory } from './metrics-history';
import { invalidFields, routeFinder } from './invalid-fields';
import pLimit from 'p-limit';
import { ProblemError, problemFor, sendProblem } from './problem';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { listSessions } from './session-list';
import { IF_MATCH_PATTERN, answerInputRoute, approvalsRoute, decideRoute, meRoute, metricsSeriesRoute, usageRoute, deleteMemoryRoute, listMemoriesRoute, memoryAuditRoute, endRoute, eventsRoute, getSessionRoute, interruptRoute, listSessionsRoute, postMessageRoute } from './routes';

export interface ApiLimits {
  /** Largest request body, in bytes (413 above). */
  maxBodyBytes: number;
  /** Requests per minute per token (429 above, with Retry-After). */
  requestsPerMinute: number;
  /** Open event streams per principal (429 above). */
  streamsPerPrincipal: number;
  /** Comment lines on idle event streams, so proxies keep them open. */
  heartbeatMs: number;
  /**
   * An event stream whose reader has taken nothing for this long (one write
   * waiting on a full socket) is closed, freeing its slot; the reader resumes
   * with Last-Event-ID.
   */
  streamStallMs: number;
  /**
   * Events one stream may hold for a reader slower than the session: past
   * this it is closed, as a stalled one is. Twice the events the server keeps
   * a session (api/event-hub.ts), so a reader resuming from the oldest kept
   * one fits.
   */
  streamQueueEvents: number;
}

/** How many checks a write's stall time is counted in (see the event stream's `write`). */
const STALL_TICKS = 10;

export const DEFAULT_API_LIMITS: ApiLimits = {
  maxBodyBytes: 256 * 1024,
  requestsPerMinute: 600,
  streamsPerPrincipal: 10,
  heartbeatMs: 15_000,
  streamStallMs: 30_000,
  streamQueueEvents: 2 * HUB_BUFFER_EVENTS,
};

export interface ApiOptions {
  /** The typed client the API acts through (its principal is replaced by each caller's). */
  agent: AgentClient;
  tokens: TokenBook;
  limits?: Partial<ApiLimits>;
  /** Log lines (never tokens or message text). */
  log?: (line: string) => void;
  /** The workers' metrics over time, for the dashboard (GET /v1/metrics/series). */
  metricsHistory?: MetricsHistory;
  /** The web console: its built bundle (`web/dist`, made by `npm run build:web`), served at `/`. */
  console?: ConsoleOptions;
}

export interface ConsoleOptions {
  /** The folder holding index.html, app.js and app.css. */
  dir: string;
  /** The Temporal Web UI's base URL, for the inspector's link to a session. */
  temporalUiUrl?: string;
}

type Env = { Variables: { caller: ApiTokenEntry } };

/** The Node response under a request served by @hono/node-server (none under `app.request` in tests). */
function nodeResponseOf(c: Context): ServerResponse | undefined {
  const env: unknown = c.env;
  if (typeof env !== 'object' || env === null || !('outgoing' in env)) return undefined;
  const outgoing = (env as { outgoing: unknown }).outgoing;
  return typeof outgoing === 'object' && outgoing !== null && typeof (outgoing as ServerResponse).destroy === 'function' ? (outgoing as ServerResponse) : undefined;
}

/** Session queries one approvals listing has in flight at most, so a listing of 200 is not 200 queries at once. */
const APPROVAL_READS_AT_ONCE = 8;

/** A token bucket per token: `perMinute` requests, refilled continuously. */
class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  constructor(private readonly perMinute: number) {}

  /** Seconds to wait, or 0 when the request may go. */
  take(key: string, now = Date.now()): number {
    const rate = this.perMinute / 60_000;
    const b = this.buckets.get(key) ?? { tokens: this.perMinute, at: now };
    b.tokens = Math.min(this.perMinute, b.tokens + (now - b.at) * rate);
    b.at = now;
    this.buckets.set(key, b);
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return 0;
    }
    return (1 - b.tokens) / rate / 1000;
  }
}

const principalOf = (entry: ApiTokenEntry): Principal => ({ tenant: entry.tenant, user: entry.user, roles: entry.roles });

/** The version an If-Match names (the header's schema has checked its form, with the request's other fields). */
function versionFromIfMatch(value: string | undefined): number | undefined {
  const m = value === undefined ? null : IF_MATCH_PATTERN.exec(value);
  return m ? Number(m[1]) : undefined;
}

/**
 * The HTTP API in front of Temporal: bearer tokens mapped to principals,
 * problem details for every error, one event subscription per session
 * fanned out to every reader, OpenAPI 3.1 at /openapi.json.
 */
export function createApi(options: ApiOptions): { app: OpenAPIHono<Env>; hub: EventHub; metrics: ApiMetrics } {
  const limits = { ...DEFAULT_API_LIMITS, ...options.limits };
  const log = options.log ?? (() => undefined);
  const hub = new EventHub(options.agent);
  const limiter = new RateLimiter(limits.requestsPerMinute);
  const openStreams = new Map<string, number>();
  const metrics = new ApiMetrics(() => hub.openFeeds);

  const app = new OpenAPIHono<Env>({
    // Every invalid field of every part of the request (path, query, headers, body), as problem details (422).
    defaultHook: async (result, c) => {
      if (result.success) return;
      const route = routeOf(c);
      const errors = route ? await invalidFields(c, route.request) : [];
      if (errors.length === 0) errors.push(...result.error.issues.map((i) => ({ path: [result.target, ...i.path.map(String)].join('.'), message: i.message })));
      const parts = [...new Set(errors.map((e) => e.path.split('.')[0]))].join(', ');
      return sendProblem(c, 422, 'SessionInputInvalid', `Invalid ${parts}: ${errors.map((e) => `${e.path}: ${e.message}`).join('; ')}`, { errors });
    },
  });
  const routeOf = routeFinder(() => app.openAPIRegistry.definitions);

  app.use('*', metrics.middleware());
  // Every answer, problems and event streams included: never sniffed as another type, never sent on as a
  // Referer, and (what the API answers being a person's sessions and memories) never kept by a shared cache.
  app.use('*', async (c, next) => {
    await next();
    c.header('X-Content-Type-Options', 'nosniff');
    c.header('Referrer-Policy', 'no-referrer');
    if (c.req.path.startsWith('/v1/') && !c.res.headers.has('Cache-Control')) c.header('Cache-Control', 'no-store');
  });
  // Prometheus scrapes this (no token: put it on a network only your Prometheus reaches, as usual for /metrics).
  app.get('/metrics', async (c) => c.body(await metrics.registry.metrics(), 200, { 'content-type': metrics.registry.contentType }));

  app.onError((err, c) => {
    // Hono's own refusals (malformed JSON 400, wrong content type 415) keep their status.
    if (err instanceof HTTPException && err.status < 500) {
      if (err.status === 415) {
        const sent = c.req.header('content-type');
        // The value is echoed only when it is short printable text: a header is the caller's, but not a place for a payload.
        const named = sent === undefined ? 'none was sent' : /^[\x20-\x7e]{1,100}$/.test(sent) ? `"${sent}" was sent` : 'another was sent';
        return sendProblem(c, 415, 'UnsupportedMediaType', `The body must be JSON, sent with Content-Type: application/json; ${named}.`);
      }
      return sendProblem(c, err.status, 'RequestInvalid', `${err.message || 'The request could not be read'}.`);
    }
    const problem = problemFor(err);
    // The whole message for the operator (a Temporal error names the address and task queue); the caller gets the problem's text.
    if (problem.status >= 500) log(`api: ${c.req.method} ${c.req.path} failed: ${err instanceof Error ? `${err.name}${problem.status === 500 ? '' : `: ${err.message}`}` : 'error'}`);
    return sendProblem(c, problem.status, problem.failureType, problem.message, problem.extra);
  });
  app.notFound((c) => sendProblem(c, 404, 'RouteNotFound', `No route ${c.req.method} ${c.req.path}; see /openapi.json.`));

  const authenticate: MiddlewareHandler<Env> = async (c, next) => {
    const header = c.req.header('authorization');
    const token = header?.match(/^Bearer\s+(\S+)\s*$/i)?.[1];
    if (!token) {
      c.header('WWW-Authenticate', 'Bearer');
      return sendProblem(c, 401, 'NotAuthenticated', 'Send Authorization: Bearer <token> (tokens are configured in API_TOKENS or API_TOKENS_FILE; npm run api:token makes one).');
    }
    const entry = options.tokens.lookup(token);
    if (!entry) {
      c.header('WWW-Authenticate', 'Bearer error="invalid_token"');
      return sendProblem(c, 401, 'NotAuthenticated', 'The bearer token is not known to this server.');
    }
    const wait = limiter.take(entry.sha256);
    if (wait > 0) return sendProblem(c, 429, 'RateLimited', `More than ${limits.requestsPerMinute} requests a minute with this token; retry in ${Math.ceil(wait)} s.`, { retryAfterSeconds: wait });
    c.set('caller', entry);
    await next();
  };

  app.use('/v1/*', authenticate);
  app.use(
    '/v1/*',
    bodyLimit({
      maxSize: limits.maxBodyBytes,
      onError: (c) => sendProblem(c, 413, 'RequestTooLarge', `The request body is over ${limits.maxBodyBytes} bytes.`),
    }),
  );

  const agentFor = (c: Context<Env>) => options.agent.as(principalOf(c.get('caller')));

  app.openapi(postMessageRoute, async (c) => {
    const { sessionId } = c.req.valid('param');
    const headers = c.req.valid('header');
    const body = c.req.valid('json');
    const caller = c.get('caller');
    const { project, ...rest } = body.options ?? {};
    const expectedVersion = versionFromIfMatch(headers['if-match']);
    const sessionOptions = { ...rest, sessionId, namespace: { tenant: caller.tenant, user: caller.user, ...(project ? { project } : {}) } };
    const message = {
      text: body.text,
      ...(headers['idempotency-key'] ? { clientMessageId: headers['idempotency-key'] } : {}),
      ...(expectedVersion !== undefined ? { expectedVersion } : {}),
    };
    // Waiting for the turn: as long as the server answers (a turn may take minutes), and across a
    // continue-as-new that carried the turn to the next run, as `ask` does; `send` answers at acceptance.
    // A caller who hangs up stops the wait (the message, once accepted, still runs): nothing is left polling for it.
    const hungUp = c.req.raw.signal;
    let result: Awaited<ReturnType<AgentClient['send']>>;
    try {
      result = body.waitForTurn ? await agentFor(c).ask(sessionOptions, message, { signal: hungUp }) : await agentFor(c).send(sessionOptions, message);
    } catch (err) {
      // Nobody reads this answer, and nothing failed: the wait was stopped because the caller left (a 4xx, not logged
      // as a failure of the server; other errors, after a hang-up too, are as before).
      if (body.waitForTurn && hungUp.aborted) throw new ProblemError(499 as ContentfulStatusCode, 'CallerGone', `The caller hung up before the turn ended; the message was taken and its turn runs.`);
      throw err;
    }
    c.header('ETag', `"${result.version}"`);
    return c.json({ sessionId, ...result }, result.turn ? 200 : 202);
  });

  app.openapi(getSessionRoute, async (c) => {
    const { sessionId } = c.req.valid('param');
    const view = await agentFor(c).getSession(sessionId);
    c.header('ETag', `"${view.version}"`);
    return c.json(view, 200);
  });

  app.openapi(decideRoute, async (c) => {
    const { sessionId, toolCallId } = c.req.valid('param');
    const { approved, reason, confirmationId } = c.req.valid('json');
    const agent = agentFor(c);
    const which = confirmationId ? { confirmationId } : {};
    await (approved ? agent.approve(sessionId, toolCallId, reason, which) : agent.deny(sessionId, toolCallId, reason, which));
    return c.body(null, 204);
  });

  app.openapi(answerInputRoute, async (c) => {
    const { sessionId, inputId } = c.req.valid('param');
    const { action, content } = c.req.valid('json');
    await agentFor(c).answerInput(sessionId, { inputId, action, ...(content !== undefined ? { content } : {}) });
    return c.body(null, 204);
  });

  app.openapi(interruptRoute, async (c) => {
    const { sessionId } = c.req.valid('param');
    const agent = agentFor(c);
    // Signals cannot be refused by the workflow: check access first, so a stranger gets 403 rather than a silent no-op.
    await agent.getSession(sessionId);
    const body = c.req.valid('json');
    await agent.interrupt(sessionId, body?.reason, body?.turnId !== undefined ? { turnId: body.turnId } : {});
    return c.body(null, 202);
  });

  app.openapi(endRoute, async (c) => {
    const { sessionId } = c.req.valid('param');
    const agent = agentFor(c);
    const caller = c.get('caller');
    const view = await agent.getSession(sessionId);
    const owner = view.owner ?? view.namespace;
    const isOwner = owner.tenant === caller.tenant && owner.user === caller.user;
    if (!isOwner && !hasTenantRole(owner.tenant, principalOf(caller), 'admin')) {
      throw new ProblemError(403, 'NotAuthorized', `Not authorized: ${caller.tenant}/${caller.user} may not end session ${sessionId}; its owner or an admin of its tenant may.`);
    }
    await agent.end(sessionId, c.req.valid('json')?.reason);
    return c.body(null, 202);
  });

  app.openapi(eventsRoute, async (c) => {
    const { sessionId } = c.req.valid('param');
    const { from } = c.req.valid('query');
    const lastEventId = c.req.valid('header')['last-event-id'];
    const caller = c.get('caller');
    const view = await agentFor(c).getSession(sessionId);
    const owner = view.owner ?? view.namespace;
    const key = `${caller.tenant}/${caller.user}`;
    const open = openStreams.get(key) ?? 0;
    if (open >= limits.streamsPerPrincipal) {
      throw new ProblemError(429, 'TooManyStreams', `${key} already has ${open} open event streams (at most ${limits.streamsPerPrincipal}); close one first.`, { retryAfterSeconds: 5 });
    }
    // The slot is taken before the first wait, and given back once, whichever way the request ends: a count read
    // before a wait and written after it let parallel requests pass the limit, and a stream closed meanwhile be
    // counted for ever.
    openStreams.set(key, open + 1);
    let released = false;
    const release = (): void => {
      if (released) return;
      released = true;
      const left = (openStreams.get(key) ?? 1) - 1;
      if (left > 0) openStreams.set(key, left);
      else openStreams.delete(key);
    };
    const fromOffset = lastEventId !== undefined ? Number(lastEventId) + 1 : (from ?? 0);
    let unsubscribe: () => void;
    const queue: SessionEvent[] = [];
    let ended: { error?: unknown } | undefined;
    let wake: (() => void) | undefined;
    let sse: SSEStreamingApi | undefined;
    let dropped = false;
    // A reader that takes nothing, or falls ever further behind, must not hold the server's memory or its slot:
    // the connection is closed (nothing can be written to it), and the reader resumes with Last-Event-ID.
    const drop = (reason: 'stalled' | 'behind'): void => {
      if (dropped) return;
      dropped = true;
      metrics.streamsDropped.inc({ reason });
      options.log?.(`api: closed an event stream of session ${sessionId} for ${key}: ${reason === 'stalled' ? `its reader took nothing for ${limits.streamStallMs} ms` : `its reader fell ${queue.length} events behind`}`);
      queue.length = 0;
      sse?.abort();
      nodeResponseOf(c)?.destroy();
      wake?.();
    };
    // The events the hub holds for the session are handed over at once when the reader subscribes: they never count
    // as falling behind (with a limit below the hub's buffer, a new reader was closed before its first event, and so
    // again on every reconnection).
    let mayHold = Infinity;
    try {
      // Past the open run's stream end (the session started afresh since the reader's last event, or a made-up
      // offset): 409 OffsetAhead with the next offset, where the stream would otherwise wait silently for an offset
      // not coming. A closed session's events come from its archive, which ends the stream by itself.
      if (fromOffset > 0) {
        const next = await agentFor(c).nextEventOffset(sessionId);
        if (next !== undefined && fromOffset > next) throw new OffsetAheadError(sessionId, fromOffset, next);
      }
      // Throws TruncatedOffset (410) before anything is streamed when the asked offset is known to be gone.
      unsubscribe = hub.subscribe(sessionId, owner, fromOffset, {
        event: (e) => {
          if (dropped) return;
          queue.push(e);
          if (queue.length > mayHold) drop('behind');
          wake?.();
        },
        end: (error) => {
          ended = { error };
          wake?.();
        },
      });
    } catch (err) {
      release();
      throw err;
    }
    mayHold = Math.max(limits.streamQueueEvents, queue.length);
    metrics.streams.inc();
    return streamSSE(c, async (stream) => {
      sse = stream;
      let aborted = dropped;
      stream.onAbort(() => {
        aborted = true;
        wake?.();
      });
      /**
       * One write, the connection closed when the reader takes nothing for the stall time. The time counted is time
       * the server ran: a tick that comes late (the process paused by a long GC or a starved CPU, when no reader
       * could be seen taking anything) counts at most two ticks, so a pause alone never drops a reader that keeps up.
       */
      const write = async (send: () => Promise<unknown>): Promise<void> => {
        const tickMs = Math.max(1, Math.floor(limits.streamStallMs / STALL_TICKS));
        let waited = 0;
        let last = performance.now();
        const stall = setInterval(() => {
          const now = performance.now();
          waited += Math.min(now - last, 2 * tickMs);
          last = now;
          if (waited >= limits.streamStallMs) drop('stalled');
        }, tickMs);
        try {
          await send();
        } finally {
          clearInterval(stall);
        }
      };
      try {
        while (!aborted && !dropped) {
          const e = queue.shift();
          if (e) {
            await write(() => stream.writeSSE({ id: String(e.offset), event: e.event.type, data: JSON.stringify(e.event) }));
            if (!dropped) metrics.eventsSent.inc();
            continue;
          }
          if (ended) {
            const { error } = ended;
            if (error) {
              const p = problemFor(error);
              await write(() => stream.writeSSE({ event: 'problem', data: JSON.stringify({ status: p.status, failureType: p.failureType, detail: p.message, ...p.extra }) }));
            } else {
              await write(() => stream.writeSSE({ event: 'end', data: '{}' }));
            }
            break;
          }
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, limits.heartbeatMs);
            wake = () => {
              clearTimeout(timer);
              resolve();
            };
          });
          wake = undefined;
          if (queue.length === 0 && !ended && !aborted && !dropped) await write(() => stream.write(': keep-alive\n\n'));
        }
      } finally {
        unsubscribe();
        metrics.streams.dec();
        release();
      }
    });
  });

  app.openapi(listSessionsRoute, async (c) => {
    const { user, status, state, limit } = c.req.valid('query');
    const sessions = await listSessions(options.agent, principalOf(c.get('caller')), { ...(user ? { user } : {}), ...(status ? { status } : {}), state: state ?? (status ? 'any' : 'running'), limit });
    return c.json({ sessions }, 200);
  });

  app.openapi(approvalsRoute, async (c) => {
    const { limit } = c.req.valid('query');
    const caller = c.get('caller');
    const agent = agentFor(c);
    const waiting = await listSessions(options.agent, principalOf(caller), { status: 'awaiting_approval', state: 'running', limit });
    const approvals = [];
    // The list is eventually consistent; each session says what is pending now. Asked a few at a time, per request
    // (a slow session holds up only the listing that asked for it), so one request never sends the server `limit` queries at once.
    const reads = pLimit(APPROVAL_READS_AT_ONCE);
    // A session that closed since the list, or that the caller may no longer read, holds nothing to decide. Any other
    // failure (workers down, a query timing out) is not "nothing pending": the answer says which sessions it could not read.
    const unreadable: string[] = [];
    let firstFailure: unknown;
    const views = await Promise.all(
      waiting.map((s) =>
        reads(() =>
          agent.getSession(s.sessionId).catch((err: unknown) => {
            if (err instanceof SessionNotFoundError || err instanceof NotAuthorizedError) return undefined;
            unreadable.push(s.sessionId);
            firstFailure ??= err;
            return undefined;
          }),
        ),
      ),
    );
    // Nothing read at all: the error itself (503/504), never an empty inbox.
    if (unreadable.length > 0 && unreadable.length === waiting.length) throw firstFailure;
    for (const [i, s] of waiting.entries()) {
      for (const p of views[i]?.pendingConfirmations ?? []) {
        approvals.push({ sessionId: s.sessionId, tenant: s.tenant, user: s.user, toolCallId: p.toolCallId, toolName: p.toolName, risk: p.risk, ...(p.requestedAt ? { requestedAt: p.requestedAt } : {}), confirmation: p as unknown as Record<string, unknown> });
      }
    }
    return c.json({ approvals: approvals.slice(0, limit), ...(unreadable.length > 0 ? { unreadable } : {}) }, 200);
  });

  app.openapi(listMemoriesRoute, async (c) => {
    const { tenant, user } = c.req.valid('param');
    const { status, kind, q, limit, cursor, project } = c.req.valid('query');
    const statuses = status ? ([...new Set(status.split(','))] as Array<'active' | 'superseded' | 'expired' | 'deleted'>) : undefined;
    const result = await agentFor(c).listMemories({
      namespace: { tenant, user, ...(project ? { project } : {}) },
      ...(statuses ? { statuses } : {}),
      ...(kind ? { kinds: [kind] } : {}),
      ...(q ? { contains: q } : {}),
      ...(cursor ? { after: cursor } : {}),
      limit,
    });
    return c.json({ memories: result.memories, malformed: result.malformed, ...(result.next ? { next: result.next } : {}) }, 200);
  });

  app.openapi(deleteMemoryRoute, async (c) => {
    const { tenant, user, memoryId } = c.req.valid('param');
    const { project } = c.req.valid('query');
    const reason = c.req.valid('json')?.reason;
    const result = await agentFor(c).deleteMemory({ namespace: { tenant, user, ...(project ? { project } : {}) }, memoryId, ...(reason ? { reason } : {}) });
    if (!result.deleted) throw new ProblemError(404, 'MemoryNotFound', `No active memory ${memoryId} for ${tenant}/${user}${project ? ` in project ${project}` : ' outside any project (a project memory needs ?project=)'}.`);
    return c.json({ deleted: true as const, ...(result.memory ? { memory: result.memory } : {}) }, 200);
  });

  app.openapi(memoryAuditRoute, async (c) => {
    const { tenant, user, memoryId } = c.req.valid('param');
    const { project } = c.req.valid('query');
    const result = await agentFor(c).memoryAudit({ namespace: { tenant, user, ...(project ? { project } : {}) }, memoryId });
    if (result.entries.length === 0 && result.malformed === 0) {
      throw new ProblemError(404, 'MemoryNotFound', `No memory ${memoryId} for ${tenant}/${user}${project ? ` in project ${project}` : ' outside any project (a project memory needs ?project=)'}.`);
    }
    return c.json({ memoryId, entries: result.entries, malformed: result.malformed }, 200);
  });

  app.openapi(meRoute, (c) => {
    const caller = c.get('caller');
    const ui = options.console?.temporalUiUrl;
    return c.json({ tenant: caller.tenant, user: caller.user, roles: caller.roles, temporalNamespace: options.agent.client.options.namespace, ...(ui ? { temporalUiUrl: ui } : {}) }, 200);
  });

  app.openapi(usageRoute, async (c) => {
    const { user, all, sessionId, days } = c.req.valid('query');
    const caller = c.get('caller');
    const summary = await agentFor(c).getUsage({ tenant: caller.tenant, ...(all === 'true' ? {} : sessionId && !user ? {} : { user: user ?? caller.user }), ...(sessionId ? { sessionId } : {}), days });
    const { query: _query, ...body } = summary;
    return c.json(body, 200);
  });

  app.openapi(metricsSeriesRoute, (c) => {
    const caller = c.get('caller');
    if (!caller.roles.includes('admin')) {
      throw new ProblemError(403, 'NotAuthorized', `Not authorized: the metrics dashboard shows every tenant's figures; ${caller.tenant}/${caller.user} needs the admin role.`);
    }
    if (!options.metricsHistory) {
      throw new ProblemError(404, 'MetricsNotConfigured', 'This server reads no worker metrics: set WORKER_METRICS_URLS to the workers\' /metrics addresses (each worker serves one with METRICS_PORT).');
    }
    return c.json(options.metricsHistory.series(c.req.valid('query').after), 200);
  });

  app.doc31('/openapi.json', {
    openapi: '3.1.0',
    info: { title: 'durable-agent API', version: '1.0.0', description: 'Sessions, events, confirmations. Errors are RFC 9457 problem details.' },
  });
  app.openAPIRegistry.registerComponent('securitySchemes', 'bearer', { type: 'http', scheme: 'bearer', description: 'A token from API_TOKENS / API_TOKENS_FILE' });
  app.get('/healthz', (c) => c.json({ ok: true }));
  if (options.console) serveConsole(app, options.console);

  return { app, hub, metrics };
}

/**
 * The console's files: index.html at `/`, the bundle under `/assets/`. The
 * page holds no data of its own; everything it shows comes from /v1 with the
 * person's token, so these routes need none.
 */
function serveConsole(app: OpenAPIHono<Env>, options: ConsoleOptions): void {
  const root = path.resolve(options.dir);
  const index = path.join(root, 'index.html');
  if (!existsSync(index)) throw new Error(`The web console is not built: ${index} is missing (run npm run build:web)`);
  // Strict by default: the bundle is ours, and nothing is loaded from elsewhere.
  const securityHeaders = async (c: Context, next: () => Promise<void>) => {
    await next();
    c.header('Content-Security-Policy', "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'");
    c.header('X-Content-Type-Options', 'nosniff');
    c.header('Referrer-Policy', 'no-referrer');
  };
  app.use('/', securityHeaders);
  app.use('/assets/*', securityHeaders);
  app.get('/', serveStatic({ root, path: 'index.html' }));
  app.get('/assets/*', serveStatic({ root, rewriteRequestPath: (p) => p.replace(/^\/assets/, '') }));
}

/** Serves the API on host:port; resolves once it listens. */
export function listen(app: OpenAPIHono<Env>, port: number, host = '127.0.0.1'): Promise<{ server: ServerType; url: string; close(): Promise<void> }> {
  return new Promise((resolve) => {
    const server = serve({ fetch: app.fetch, port, hostname: host }, (info) => {
      resolve({
        server,
        url: `http://${host}:${info.port}`,
        close: () =>
          new Promise<void>((r) => {
            (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
            server.close(() => r());
          }),
      });
    });
  });
}
