import { execFile, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Validator } from '@cfworker/json-schema';
import { mintToken, TokenBook, type ApiTokenEntry } from '../../api/auth';
import { consoleSettings, DEFAULT_CONSOLE_DIR } from '../../api/main';
import { createApi, listen } from '../../api/server';
import { readSseEvents, type SseEvent } from '../../api/sse-reader';
import type { EventHub } from '../../api/event-hub';
import { MetricsHistory, type MetricsSeries } from '../../api/metrics-history';
import { DAY, fact, seededRandom, userSource } from '../support/memory-fixtures';
import { MemoryRepository } from '../../activities/memory/memory-repository';
import { probeTools, type ProbeLog } from '../support/probe-tools';
import type { AgentClient } from '../../client/agent-client';
import { scrape, total } from '../../api/prometheus-text';
import { eventually, startTestEnv, uniqueId, type TestEnv } from '../support/test-env';
import { buildConsole } from '../../web/build';
import { isSummaryRequest, scriptedSummary } from '../support/scripted-summarizer';
import type { ChatRequest, StepResponse } from '../../scripted-model';

/*
 * The HTTP API over real HTTP, in front of the real stack: a worker, the
 * scripted model, Temporal. Every route, every error status, SSE resume,
 * idempotent resend, and randomized cross-principal requests.
 */

const execFileAsync = promisify(execFile);
const log: ProbeLog = { runs: [] };
let env: TestEnv;
let base: string;
let hub: EventHub;
let close: () => Promise<void>;
let book: TokenBook;
const tokens: Record<'ana' | 'bob' | 'boss' | 'eve' | 'admin', string> = { ana: '', bob: '', boss: '', eve: '', admin: '' };
const closers: Array<() => Promise<void>> = [];

beforeAll(async () => {
  env = await startTestEnv({ name: 'api', extraTools: probeTools(log) });
  const entries: ApiTokenEntry[] = [];
  const add = (key: keyof typeof tokens, tenant: string, user: string, roles: Array<'user' | 'approver' | 'admin'> = ['user']) => {
    const { token, entry } = mintToken({ tenant, user, roles });
    tokens[key] = token;
    entries.push(entry);
  };
  add('ana', 'acme', 'ana');
  add('bob', 'acme', 'bob');
  add('boss', 'acme', 'boss', ['approver']);
  add('admin', 'acme', 'root', ['admin']);
  add('eve', 'evil', 'eve');
  book = new TokenBook(entries);
  const api = createApi({ agent: env.agent, tokens: book, limits: { maxBodyBytes: 16 * 1024, streamsPerPrincipal: 3, requestsPerMinute: 100_000 } });
  hub = api.hub;
  const server = await listen(api.app, 0);
  base = server.url;
  close = server.close;
});

afterAll(async () => {
  for (const c of closers) await c().catch(() => undefined);
  await close?.();
  // The hub's readers poll over the env's connection: stop them before it closes.
  hub?.close();
  await env?.close();
});

const call = (method: string, path: string, token: string | null, body?: unknown, headers: Record<string, string> = {}) =>
  fetch(`${base}${path}`, {
    method,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
    ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
  });

async function problem(res: Response): Promise<Record<string, unknown>> {
  expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
  return (await res.json()) as Record<string, unknown>;
}

/** Reads SSE events until `until` says stop; returns them and aborts the request. */
async function readSse(path: string, token: string, until: (e: SseEvent, all: SseEvent[]) => boolean, headers: Record<string, string> = {}, timeoutMs = 30_000): Promise<SseEvent[]> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  const out: SseEvent[] = [];
  try {
    const res = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${token}`, ...headers }, signal: controller.signal });
    if (res.status !== 200) throw new Error(`SSE ${path}: ${res.status} ${await res.text()}`);
    expect(res.headers.get('content-type')).toMatch(/text\/event-stream/);
    for await (const e of readSseEvents(res.body!)) {
      out.push(e);
      if (until(e, out)) return out;
    }
    return out;
  } catch (err) {
    if (controller.signal.aborted) throw new Error(`SSE ${path} timed out after ${timeoutMs} ms with ${out.map((e) => e.event).join(', ')}`);
    throw err;
  } finally {
    clearTimeout(timer);
    controller.abort();
  }
}

type JsonSchema = Record<string, unknown> & { $ref?: string };
type OpenApiDocument = { paths: Record<string, Record<string, unknown>>; components: { schemas: Record<string, JsonSchema> } };
const openApiDocument = async () => (await (await fetch(`${base}/openapi.json`)).json()) as OpenApiDocument;

const turnDone = (turnId: string) => (e: SseEvent) => e.event === 'turn_completed' && (JSON.parse(e.data) as { turnId: string }).turnId === turnId;

function scriptWipe(sessionId: string): void {
  env.model.script(
    [
      { respond: { kind: 'tool_calls', calls: [{ id: 'call_wipe', name: 'local_wipe', arguments: { confirmText: 'all' } }] } },
      { match: { hasToolResults: true }, respond: { kind: 'text', text: 'Wiped.' } },
    ],
    { lane: sessionId },
  );
}

describe('HTTP API', () => {
  it('serves an OpenAPI 3.1 document generated from the route schemas', async () => {
    const res = await fetch(`${base}/openapi.json`);
    expect(res.status).toBe(200);
    const doc = (await res.json()) as { openapi: string; paths: Record<string, Record<string, unknown>>; components: { securitySchemes: Record<string, unknown>; schemas: Record<string, unknown> } };
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths).sort()).toEqual([
      '/v1/approvals',
      '/v1/me',
      '/v1/metrics/series',
      '/v1/sessions',
      '/v1/sessions/{sessionId}',
      '/v1/sessions/{sessionId}/end',
      '/v1/sessions/{sessionId}/events',
      '/v1/sessions/{sessionId}/inputs/{inputId}',
      '/v1/sessions/{sessionId}/interrupt',
      '/v1/sessions/{sessionId}/messages',
      '/v1/sessions/{sessionId}/tool-calls/{toolCallId}/decision',
      '/v1/usage',
      '/v1/users/{tenant}/{user}/memories',
      '/v1/users/{tenant}/{user}/memories/{memoryId}',
      '/v1/users/{tenant}/{user}/memories/{memoryId}/audit',
    ]);
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(JSON.stringify(doc.components.schemas.PostMessage)).toContain('"text"');
  });

  it('the OpenAPI document passes an OpenAPI 3.1 validator and names the session view and every event as components', async () => {
    const doc = await openApiDocument();
    const dir = await mkdtemp(join(tmpdir(), 'openapi-'));
    try {
      const file = join(dir, 'openapi.json');
      await writeFile(file, JSON.stringify(doc));
      const cli = require.resolve('@seriousme/openapi-schema-validator/bin/validate-api-cli.js');
      const { stdout } = await execFileAsync(process.execPath, [cli, file]).catch((err: { stdout?: string }) => ({ stdout: err.stdout ?? String(err) }));
      expect(JSON.parse(stdout)).toEqual({ valid: true });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    const schemas = doc.components.schemas;
    const resolve = (s: JsonSchema): JsonSchema => (typeof s.$ref === 'string' ? resolve(schemas[s.$ref.replace('#/components/schemas/', '')]!) : s);
    const eventTypes = (resolve({ $ref: '#/components/schemas/AgentEvent' }).oneOf as JsonSchema[]).map((v) => (resolve(v).properties as Record<string, JsonSchema>).type!.enum);
    expect(eventTypes.flat()).toEqual(expect.arrayContaining(['text_delta', 'tool_call_start', 'tool_call_result', 'status_change', 'confirmation_required', 'turn_completed', 'error']));
    expect(schemas.AgentEvent!.discriminator).toMatchObject({ propertyName: 'type' });
    const view = schemas.SessionView!;
    expect(Object.keys(view.properties as object)).toEqual(expect.arrayContaining(['sessionId', 'status', 'version', 'pendingConfirmations', 'window', 'summary', 'keyFacts', 'counters', 'lastTurn']));
    expect(view.required).toEqual(expect.arrayContaining(['status', 'version', 'pendingConfirmations']));
    const ok = (p: string, m: string) => ((doc.paths[p]![m] as JsonSchema).responses as Record<string, JsonSchema>)['200']!.content as Record<string, JsonSchema>;
    expect(ok('/v1/sessions/{sessionId}', 'get')['application/json']!.schema).toEqual({ $ref: '#/components/schemas/SessionView' });
    expect(ok('/v1/sessions/{sessionId}/events', 'get')['text/event-stream']!.schema).toEqual({ $ref: '#/components/schemas/EventStreamMessage' });
    expect((schemas.SessionEventMessage!.properties as Record<string, JsonSchema>).data).toEqual({ $ref: '#/components/schemas/AgentEvent' });
    expect((schemas.EventStreamMessage!.anyOf as JsonSchema[]).map((m) => m.$ref)).toEqual(['SessionEventMessage', 'StreamEndMessage', 'StreamProblemMessage'].map((n) => `#/components/schemas/${n}`));
  });

  it('what a reader gets (the session view, each SSE message and its event, the end of the stream) validates against the document\'s schemas', async () => {
    const doc = await openApiDocument();
    const validatorFor = (name: string) => new Validator({ $ref: `#/components/schemas/${name}`, components: doc.components } as never, '2020-12', false);
    const [eventSchema, messageSchema, viewSchema] = ['AgentEvent', 'EventStreamMessage', 'SessionView'].map(validatorFor) as [Validator, Validator, Validator];
    const sessionId = uniqueId('api-doc');
    env.model.script(
      [
        { respond: { kind: 'tool_calls', calls: [{ id: 'call_note', name: 'local_note', arguments: { text: 'milk' } }] } },
        { match: { hasToolResults: true }, respond: { kind: 'text', text: 'Noted.' } },
      ],
      { lane: sessionId },
    );
    const { turnId } = (await (await call('POST', `/v1/sessions/${sessionId}/messages`, tokens.ana, { text: 'note milk', options: { memory: { enabled: false } } })).json()) as { turnId: string };
    const events = await readSse(`/v1/sessions/${sessionId}/events`, tokens.ana, turnDone(turnId));
    expect(events.map((e) => e.event)).toEqual(expect.arrayContaining(['text_delta', 'tool_call_start', 'tool_call_result', 'turn_completed']));
    for (const e of events) {
      const data = JSON.parse(e.data) as unknown;
      expect({ event: e.event, errors: eventSchema.validate(data).errors }).toEqual({ event: e.event, errors: [] });
      expect(messageSchema.validate({ id: e.id, event: e.event, data }).valid).toBe(true);
    }
    // The schema is not a blank cheque: a text_delta without its delta is refused.
    const { delta: _delta, ...withoutDelta } = JSON.parse(events.find((e) => e.event === 'text_delta')!.data) as Record<string, unknown>;
    expect(eventSchema.validate(withoutDelta).valid).toBe(false);
    const view = (await (await call('GET', `/v1/sessions/${sessionId}`, tokens.ana)).json()) as unknown;
    expect(viewSchema.validate(view).errors).toEqual([]);
    expect((await call('POST', `/v1/sessions/${sessionId}/end`, tokens.ana)).status).toBe(202);
    const tail = await readSse(`/v1/sessions/${sessionId}/events`, tokens.ana, (e) => e.event === 'end', { 'last-event-id': events.at(-1)!.id! });
    const end = tail.at(-1)!;
    expect(messageSchema.validate({ event: end.event, data: JSON.parse(end.data) as unknown }).valid).toBe(true);
  });

  it('GET /v1/me says who the token is, and nothing without one', async () => {
    const res = await call('GET', '/v1/me', tokens.boss);
    expect(res.status).toBe(200);
    // Every answer, a problem too, is never sniffed, never a Referer, and never kept by a shared cache.
    for (const r of [res, await call('GET', '/v1/me', null), await call('GET', '/v1/sessions/nope-404', tokens.boss)]) {
      expect([r.headers.get('x-content-type-options'), r.headers.get('referrer-policy'), r.headers.get('cache-control')]).toEqual(['nosniff', 'no-referrer', 'no-store']);
    }
    expect(await res.json()).toEqual({ tenant: 'acme', user: 'boss', roles: ['approver'], temporalNamespace: 'default' });
    expect((await call('GET', '/v1/me', null)).status).toBe(401);
  });

  it('GET /metrics: requests by route pattern and status, open streams and subscriptions, parsed as Prometheus text', async () => {
    const before = await scrape(`${base}/metrics`);
    for (let i = 0; i < 3; i++) expect((await call('GET', '/v1/me', tokens.boss)).status).toBe(200);
    for (let i = 0; i < 2; i++) expect((await call('GET', '/v1/me', null)).status).toBe(401);
    const after = await scrape(`${base}/metrics`);
    const delta = (status: string) =>
      total(after, 'agent_api_requests_total', { route: '/v1/me', method: 'GET', status }) - total(before, 'agent_api_requests_total', { route: '/v1/me', method: 'GET', status });
    expect([delta('200'), delta('401')]).toEqual([3, 2]);
    expect(after.get('agent_api_request_seconds')?.type).toBe('histogram');
    expect(after.get('agent_api_event_streams')?.type).toBe('gauge');
    expect(total(after, 'agent_api_event_subscriptions', {})).toBe(hub.openFeeds);
    expect(after.get('process_cpu_seconds_total')?.type).toBe('counter');
    // Never a session id or a token in a label.
    const text = await (await fetch(`${base}/metrics`)).text();
    expect(text).not.toMatch(/sessionId="|api-|Bearer/);
  });

  it('GET /v1/metrics/series: the workers\' metrics sampled over time for admins; 403 for others, 404 when no worker metrics are configured', async () => {
    const sessionId = uniqueId('api-series');
    env.model.script([{ respond: { kind: 'text', text: 'Counted.' } }], { lane: sessionId });
    await call('POST', `/v1/sessions/${sessionId}/messages`, tokens.ana, { text: 'count me', waitForTurn: true });
    // The second worker's address carries basic-auth credentials, which no answer may show.
    const history = new MetricsHistory([env.metricsUrl, 'http://scraper:s3cret@127.0.0.1:9/metrics'], { everyMs: 60_000, keep: 2 });
    const entries = [tokens.admin, tokens.ana].map((t) => book.lookup(t)!);
    book = new TokenBook(entries);
  const api = createApi({ agent: env.agent, tokens: book, metricsHistory: history });
    const server = await listen(api.app, 0);
    closers.push(async () => {
      api.hub.close();
      await server.close();
    });
    for (let i = 0; i < 3; i++) await history.sampleNow();
    const res = await fetch(`${server.url}/v1/metrics/series`, { headers: { authorization: `Bearer ${tokens.admin}` } });
    expect(res.status).toBe(200);
    const seriesText = await res.text();
    expect(seriesText).not.toContain('s3cret');
    const series = JSON.parse(seriesText) as MetricsSeries;
    // Only the newest `keep` samples are kept, oldest first.
    expect(series.samples).toHaveLength(2);
    expect(Date.parse(series.samples[0]!.at)).toBeLessThanOrEqual(Date.parse(series.samples[1]!.at));
    const last = series.samples[1]!;
    // A row per label set of the metric's own labels, Temporal's (task queue, workflow type) summed away.
    expect(last.metrics.agent_turns_total?.find((r) => r.labels.outcome === 'completed')?.value).toBeGreaterThanOrEqual(1);
    expect(last.metrics.agent_turns_total?.every((r) => Object.keys(r.labels).join() === 'outcome')).toBe(true);
    expect(last.metrics.agent_model_call_seconds?.reduce((n, r) => n + (r.count ?? 0), 0)).toBeGreaterThanOrEqual(1);
    expect(last.unreachable.map((u) => u.url)).toEqual(['http://127.0.0.1:9/metrics']);
    expect(series.catalog.find((c) => c.name === 'agent_tool_calls_total')?.capability).toBe('tools');
    const refused = await fetch(`${server.url}/v1/metrics/series`, { headers: { authorization: `Bearer ${tokens.ana}` } });
    expect(refused.status).toBe(403);
    expect((await call('GET', '/v1/metrics/series', tokens.admin)).status).toBe(404);
  });

  it('401 without a token or with an unknown one, as problem details', async () => {
    const none = await call('GET', '/v1/sessions/x', null);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Bearer');
    expect(await problem(none)).toMatchObject({ status: 401, failureType: 'NotAuthenticated', type: 'urn:durable-agent:problem:NotAuthenticated', instance: '/v1/sessions/x' });
    const wrong = await call('GET', '/v1/sessions/x', 'dat_not-a-token');
    expect(wrong.status).toBe(401);
    expect(JSON.stringify(await problem(wrong))).not.toContain('dat_not-a-token');
  });

  it('sends a message (202), streams the turn as SSE with offsets as ids, and reads the session with its version as ETag', async () => {
    const sessionId = uniqueId('api');
    env.model.script([{ respond: { kind: 'text', text: 'Hello over HTTP.' } }], { lane: sessionId });
    const res = await call('POST', `/v1/sessions/${sessionId}/messages`, tokens.ana, { text: 'hi' });
    expect(res.status).toBe(202);
    const accepted = (await res.json()) as { sessionId: string; turnId: string; version: number };
    expect(accepted).toMatchObject({ sessionId, turnId: 'turn-1', version: 1 });
    const events = await readSse(`/v1/sessions/${sessionId}/events`, tokens.ana, turnDone(accepted.turnId));
    const offsets = events.map((e) => Number(e.id));
    expect(offsets).toEqual([...offsets].sort((a, b) => a - b));
    expect(new Set(offsets).size).toBe(offsets.length);
    const text = events.filter((e) => e.event === 'text_delta').map((e) => (JSON.parse(e.data) as { delta: string }).delta).join('');
    expect(text).toBe('Hello over HTTP.');
    const view = await call('GET', `/v1/sessions/${sessionId}`, tokens.ana);
    expect(view.status).toBe(200);
    const body = (await view.json()) as { version: number; owner: { user: string } };
    expect(view.headers.get('etag')).toBe(`"${body.version}"`);
    expect(body.owner).toMatchObject({ tenant: 'acme', user: 'ana' });
  });

  it('waitForTurn answers 200 with the finished turn', async () => {
    const sessionId = uniqueId('api-wait');
    env.model.script([{ respond: { kind: 'text', text: 'Done waiting.' } }], { lane: sessionId });
    const res = await call('POST', `/v1/sessions/${sessionId}/messages`, tokens.ana, { text: 'hi', waitForTurn: true });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ turn: { outcome: 'completed', text: 'Done waiting.' } });
  });

  it('waitForTurn answers 200 with the finished turn when the session continued as new before the turn ran (the turn went to the next run)', async () => {
    const sessionId = uniqueId('api-wait-can');
    // Each turn's answer leaves the window at the next, so the session folds it into its summary after the turn:
    // a message sent as soon as the previous turn answered reaches the run while it settles before continuing as new.
    const answer = (req: ChatRequest): StepResponse => (isSummaryRequest(req) ? scriptedSummary(req) : { kind: 'text', text: `${String(req.messages.at(-1)?.content)}:`.padEnd(12_000, 'x') });
    env.model.script(Array.from({ length: 200 }, () => ({ respond: answer })), { lane: sessionId });
    const options = { memory: { enabled: false }, limits: { windowMaxTokens: 8_000, maxHistoryEvents: 300 } };
    const handle = env.client.workflow.getHandle(`session-${sessionId}`);
    const runs = new Set<string>();
    // A reader of the session's events: its long poll is a handler the run lets finish before it continues as new.
    const reading = new AbortController();
    let reader: Promise<void> | undefined;
    // Three runs: the message lands in the window before the run continues as new at one of the two continues, most times.
    for (let i = 0; i < 60 && runs.size < 3; i++) {
      if (i === 1) {
        reader = (async () => {
          const res = await fetch(`${base}/v1/sessions/${sessionId}/events`, { headers: { authorization: `Bearer ${tokens.ana}` }, signal: reading.signal });
          for await (const _ of readSseEvents(res.body!)) void _;
        })().catch(() => undefined);
        await eventually(async () => hub.openFeeds > 0, 'the reader to subscribe');
      }
      const res = await call('POST', `/v1/sessions/${sessionId}/messages`, tokens.ana, { text: `message ${i}`, waitForTurn: true, options });
      const body = (await res.json()) as { turn?: { outcome: string; text: string } };
      expect({ i, status: res.status, outcome: body.turn?.outcome, text: body.turn?.text.split("x")[0] }).toEqual({ i, status: 200, outcome: "completed", text: `message ${i}:` });
      runs.add((await handle.describe()).runId);
    }
    reading.abort();
    await reader;
    expect(runs.size).toBe(3);
  }, 150_000);

  it('a resend with the same Idempotency-Key returns the first answer and runs no second turn', async () => {
    const sessionId = uniqueId('api-idem');
    env.model.script([{ respond: { kind: 'text', text: 'Once.' } }], { lane: sessionId });
    const first = await (await call('POST', `/v1/sessions/${sessionId}/messages`, tokens.ana, { text: 'once' }, { 'idempotency-key': 'msg-1' })).json();
    const again = await call('POST', `/v1/sessions/${sessionId}/messages`, tokens.ana, { text: 'once' }, { 'idempotency-key': 'msg-1' });
    expect(again.status).toBe(202);
    expect(await again.json()).toEqual(first);
    await readSse(`/v1/sessions/${sessionId}/events`, tokens.ana, turnDone('turn-1'));
    expect(env.model.requestsFor(sessionId)).toHaveLength(1);
    env.model.assertDone(sessionId);
  });

  it("another tenant's caller who sends ana's Idempotency-Key to her session gets 403, not her answer", async () => {
    const sessionId = uniqueId('api-idem-other');
    env.model.script([{ respond: { kind: 'text', text: 'For ana only.' } }], { lane: sessionId });
    const first = await call('POST', `/v1/sessions/${sessionId}/messages`, tokens.ana, { text: 'secret question', waitForTurn: true }, { 'idempotency-key': 'order-7' });
    expect(await first.json()).toMatchObject({ turn: { text: 'For ana only.' } });
    for (const token of [tokens.eve, tokens.bob]) {
      const other = await call('POST', `/v1/sessions/${sessionId}/messages`, token, { text: 'x', waitForTurn: true }, { 'idempotency-key': 'order-7' });
      expect(other.status).toBe(403);
      expect(JSON.stringify(await other.json())).not.toContain('For ana only.');
    }
    expect(env.model.requestsFor(sessionId)).toHaveLength(1);
  });

  it('If-Match with a stale version is 409 with the current version; a malformed one is 422', async () => {
    const sessionId = uniqueId('api-ver');
    env.model.script([{ respond: { kind: 'text', text: 'v1.' } }], { lane: sessionId });
    await call('POST', `/v1/sessions/${sessionId}/messages`, tokens.ana, { text: 'first', waitForTurn: true });
    const stale = await call('POST', `/v1/sessions/${sessionId}/messages`, tokens.ana, { text: 'second' }, { 'if-match': '"0"' });
    expect(stale.status).toBe(409);
    expect(await problem(stale)).toMatchObject({ failureType: 'SessionVersionConflict', currentVersion: 1 });
    const bad = await call('POST', `/v1/sessions/${sessionId}/messages`, tokens.ana, { text: 'second' }, { 'if-match': 'yesterday' });
    expect(bad.status).toBe(422);
    expect((await problem(bad)).detail).toMatch(/If-Match must be a session version/);
  });

  it('422 names every invalid field; 413 over the body limit; 404 for an unknown session and route', async () => {
    const invalid = await call('POST', `/v1/sessions/${uniqueId('api')}/messages`, tokens.ana, { text: 5, extra: true, options: { busyPolicy: 'panic' } });
    expect(invalid.status).toBe(422);
    const p = await problem(invalid);
    const paths = (p.errors as Array<{ path: string }>).map((e) => e.path);
    expect(paths).toEqual(expect.arrayContaining(['json.text', 'json.options.busyPolicy']));
    expect(p.errors).toEqual(expect.arrayContaining([expect.objectContaining({ message: expect.stringMatching(/extra/) })]));
    const badId = await call('GET', '/v1/sessions/has%20space', tokens.ana);
    expect(badId.status).toBe(422);
    const big = await call('POST', `/v1/sessions/${uniqueId('api')}/messages`, tokens.ana, { text: 'x'.repeat(20_000) });
    expect(big.status).toBe(413);
    expect(await problem(big)).toMatchObject({ failureType: 'RequestTooLarge' });
    const missing = await call('GET', `/v1/sessions/${uniqueId('nobody')}`, tokens.ana);
    expect(missing.status).toBe(404);
    expect(await problem(missing)).toMatchObject({ failureType: 'SessionNotFound' });
    const route = await call('GET', '/v1/nothing-here', tokens.ana);
    expect(route.status).toBe(404);
  });

  it('one 422 names every invalid field across path, query, headers and body', async () => {
    const paths = async (res: Response) => {
      expect(res.status).toBe(422);
      return ((await problem(res)).errors as Array<{ path: string }>).map((e) => e.path);
    };
    const message = await call('POST', '/v1/sessions/has%20space/messages', tokens.ana, { text: 5, extra: true }, { 'if-match': 'yesterday', 'idempotency-key': 'k'.repeat(200) });
    expect(await paths(message)).toEqual(['param.sessionId', 'header.idempotency-key', 'header.if-match', 'json.text', 'json']);
    const events = await call('GET', '/v1/sessions/has%20space/events?from=-1', tokens.ana, undefined, { 'last-event-id': 'abc' });
    expect(await paths(events)).toEqual(['param.sessionId', 'query.from', 'header.last-event-id']);
    // Whichever part fails first, the others are still checked: here the path is fine.
    const later = await call('POST', `/v1/sessions/${uniqueId('api')}/messages`, tokens.ana, { text: '' }, { 'if-match': 'yesterday' });
    expect(await paths(later)).toEqual(['header.if-match', 'json.text']);
    // A body that does not parse is named too, beside the path.
    const broken = await call('POST', '/v1/sessions/has%20space/messages', tokens.ana, '{');
    expect(await paths(broken)).toEqual(['param.sessionId', 'json']);
    // A JSON body sent without a content type, or with another: 415 says which header to send and what came.
    const untyped = await fetch(`${base}/v1/sessions/${uniqueId('api')}/messages`, { method: 'POST', headers: { authorization: `Bearer ${tokens.ana}` }, body: new TextEncoder().encode('{"text":"hi"}') });
    expect(untyped.status).toBe(415);
    expect(await untyped.json()).toMatchObject({ detail: 'The body must be JSON, sent with Content-Type: application/json; none was sent.' });
    const plain = await fetch(`${base}/v1/sessions/${uniqueId('api')}/messages`, { method: 'POST', headers: { authorization: `Bearer ${tokens.ana}`, 'content-type': 'text/plain' }, body: '{"text":"hi"}' });
    expect(await plain.json()).toMatchObject({ detail: 'The body must be JSON, sent with Content-Type: application/json; "text/plain" was sent.' });
    // Options too large to carry across continue-as-new, named before any session starts.
    const sessionId = uniqueId('api-big');
    const big = await call('POST', `/v1/sessions/${sessionId}/messages`, tokens.ana, { text: 'hi', options: { metadata: Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`k${i}`, 'v'])), model: { name: 'm'.repeat(300) } } });
    expect(big.status).toBe(422);
    const errors = (await problem(big)).errors as Array<{ path: string; message: string }>;
    expect(errors.map((e) => e.message)).toEqual(['metadata has 65 entries, more than 64', 'model.name is 300 characters, more than 256']);
    expect(env.model.requestsFor(sessionId)).toHaveLength(0);
  });

  it('hostile bodies get a problem, never a 500: broken JSON, null, arrays, deep nesting, wrong content type', async () => {
    const path = `/v1/sessions/${uniqueId('api-hostile')}/messages`;
    const bodies = ['{', 'null', '[]', '"text"', `{"text":${'['.repeat(5_000)}${']'.repeat(5_000)}}`, '{"text":"hi","__proto__":{"admin":true}}'];
    for (const body of bodies) {
      const res = await call('POST', path, tokens.ana, body);
      expect({ body: body.slice(0, 20), status: res.status }).toEqual({ body: body.slice(0, 20), status: expect.any(Number) });
      expect([400, 415, 422]).toContain(res.status);
      expect(await problem(res)).toMatchObject({ status: res.status });
    }
    const plain = await fetch(`${base}${path}`, { method: 'POST', headers: { authorization: `Bearer ${tokens.ana}`, 'content-type': 'text/plain' }, body: 'hi' });
    expect([400, 415, 422]).toContain(plain.status);
    expect(await problem(plain)).toMatchObject({ status: plain.status });
    expect(env.model.requestsFor(path.split('/')[3]!)).toHaveLength(0);
  });

  it('a held destructive call: a colleague and an outsider get 403, an approver approves (204), the tool runs once', async () => {
    const sessionId = uniqueId('api-confirm');
    scriptWipe(sessionId);
    const { turnId } = (await (await call('POST', `/v1/sessions/${sessionId}/messages`, tokens.ana, { text: 'wipe my notes' })).json()) as { turnId: string };
    await eventually(async () => {
      const v = (await (await call('GET', `/v1/sessions/${sessionId}`, tokens.ana)).json()) as { pendingConfirmations: unknown[] };
      return v.pendingConfirmations.length > 0;
    }, 'the confirmation');
    const path = `/v1/sessions/${sessionId}/tool-calls/call_wipe/decision`;
    for (const who of [tokens.bob, tokens.eve]) {
      const refused = await call('POST', path, who, { approved: true });
      expect(refused.status).toBe(403);
      expect(await problem(refused)).toMatchObject({ failureType: 'NotAuthorized' });
    }
    expect((await call('POST', path, tokens.boss, { approved: true, reason: 'ok' })).status).toBe(204);
    const events = await readSse(`/v1/sessions/${sessionId}/events`, tokens.boss, turnDone(turnId));
    expect(events.some((e) => e.event === 'confirmation_decided')).toBe(true);
    expect(log.runs.filter((r) => r.key.startsWith(`${sessionId}:`))).toHaveLength(1);
    const unknown = await call('POST', `/v1/sessions/${sessionId}/tool-calls/call_none/decision`, tokens.ana, { approved: false });
    expect(unknown.status).toBe(404);
  });

  it('a decision naming a request that no longer waits is refused when the model used the call id again; the new request is decided by its own confirmationId', async () => {
    const sessionId = uniqueId('api-reused-id');
    const wipe = { respond: { kind: 'tool_calls' as const, calls: [{ id: 'call_0', name: 'local_wipe', arguments: { confirmText: 'all' } }] } };
    env.model.script([wipe, wipe, { respond: { kind: 'text', text: 'Left them.' } }], { lane: sessionId });
    const { turnId } = (await (await call('POST', `/v1/sessions/${sessionId}/messages`, tokens.ana, { text: 'wipe my notes' })).json()) as { turnId: string };
    type View = { pendingConfirmations: Array<{ toolCallId: string; confirmationId?: string }> };
    const heldAfter = (seen: string[]) =>
      eventually(async () => {
        const held = ((await (await call('GET', `/v1/sessions/${sessionId}`, tokens.ana)).json()) as View).pendingConfirmations[0];
        return held?.confirmationId && !seen.includes(held.confirmationId) ? held : null;
      }, 'a request held for confirmation');
    const first = await heldAfter([]);
    expect(first).toMatchObject({ toolCallId: 'call_0', confirmationId: `${turnId}:1:call_0` });
    expect((await call('POST', `/v1/sessions/${sessionId}/tool-calls/call_0/decision`, tokens.ana, { approved: false, confirmationId: first.confirmationId })).status).toBe(204);
    const second = await heldAfter([first.confirmationId!]);
    expect(second).toMatchObject({ toolCallId: 'call_0', confirmationId: `${turnId}:2:call_0` });
    // A late approval of the first request (a page still showing it) must not approve the second.
    const stale = await call('POST', `/v1/sessions/${sessionId}/tool-calls/call_0/decision`, tokens.ana, { approved: true, confirmationId: first.confirmationId });
    expect(stale.status).toBe(404);
    expect(await stale.json()).toMatchObject({ type: expect.stringMatching(/ConfirmationUnknown$/), detail: expect.stringMatching(/another request than .*:1:call_0/) });
    expect(((await (await call('GET', `/v1/sessions/${sessionId}`, tokens.ana)).json()) as View).pendingConfirmations).toEqual([expect.objectContaining({ confirmationId: second.confirmationId })]);
    expect((await call('POST', `/v1/sessions/${sessionId}/tool-calls/call_0/decision`, tokens.ana, { approved: false, confirmationId: second.confirmationId })).status).toBe(204);
    await readSse(`/v1/sessions/${sessionId}/events`, tokens.ana, turnDone(turnId));
    expect(log.runs.filter((r) => r.key.startsWith(`${sessionId}:`))).toHaveLength(0);
  });

  it('lists sessions a caller may read, and an approvals inbox: the held call shows as awaiting_approval to the owner and a tenant approver only, and is approved from there once', async () => {
    const sessionId = uniqueId('api-inbox');
    scriptWipe(sessionId);
    const { turnId } = (await (await call('POST', `/v1/sessions/${sessionId}/messages`, tokens.ana, { text: 'wipe my notes' })).json()) as { turnId: string };
    type Inbox = { approvals: Array<{ sessionId: string; toolCallId: string; toolName: string; user: string }> };
    const inboxOf = async (token: string) => ((await (await call('GET', '/v1/approvals', token)).json()) as Inbox).approvals.filter((a) => a.sessionId === sessionId);
    const held = await eventually(async () => {
      const items = await inboxOf(tokens.boss);
      return items.length > 0 ? items : null;
    }, 'the call in the approver\'s inbox');
    expect(held).toEqual([expect.objectContaining({ toolCallId: 'call_wipe', toolName: 'local_wipe', user: 'ana' })]);
    expect(await inboxOf(tokens.ana)).toHaveLength(1);
    expect(await inboxOf(tokens.bob)).toEqual([]);
    expect(await inboxOf(tokens.eve)).toEqual([]);
    type Listing = { sessions: Array<{ sessionId: string; status: string; pendingApprovals: number; user: string }> };
    const listed = ((await (await call('GET', '/v1/sessions?status=awaiting_approval', tokens.boss)).json()) as Listing).sessions.find((x) => x.sessionId === sessionId);
    expect(listed).toMatchObject({ status: 'awaiting_approval', pendingApprovals: 1, user: 'ana' });
    // A user sees only their own sessions; someone of another tenant sees none of them.
    const bobs = ((await (await call('GET', '/v1/sessions?user=ana', tokens.bob)).json()) as Listing).sessions;
    expect(bobs.every((x) => x.user === 'bob')).toBe(true);
    const eves = ((await (await call('GET', '/v1/sessions', tokens.eve)).json()) as Listing).sessions;
    expect(eves.some((x) => x.sessionId === sessionId)).toBe(false);
    expect((await call('POST', `/v1/sessions/${sessionId}/tool-calls/${held[0]!.toolCallId}/decision`, tokens.boss, { approved: true })).status).toBe(204);
    await readSse(`/v1/sessions/${sessionId}/events`, tokens.ana, turnDone(turnId));
    expect(log.runs.filter((r) => r.key.startsWith(`${sessionId}:`))).toHaveLength(1);
    await eventually(async () => ((await inboxOf(tokens.boss)).length === 0 ? true : null), 'the inbox to empty');
    const after = await eventually(async () => {
      const l = ((await (await call('GET', '/v1/sessions', tokens.ana)).json()) as Listing).sessions.find((x) => x.sessionId === sessionId);
      return l && l.status !== 'awaiting_approval' ? l : null;
    }, 'the status to leave awaiting_approval');
    expect(after).toMatchObject({ status: 'active', pendingApprovals: 0 });
  });

  it('lists closed sessions when asked (by state or status), each session once as its newest run says (continued runs never, a restored session not as archived), and waiting-for-approval first across the limit', async () => {
    const user = uniqueId('lister');
    const { token, entry } = mintToken({ tenant: 'acme', user });
    const server = await listen(createApi({ agent: env.agent, tokens: new TokenBook([entry]) }).app, 0);
    closers.push(server.close);
    const send = (sessionId: string, text: string, extra: Record<string, unknown> = {}) =>
      fetch(`${server.url}/v1/sessions/${sessionId}/messages`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ text, ...extra }) });
    type Listing = { sessions: Array<{ sessionId: string; status: string; pendingApprovals: number; closedAt?: string }> };
    const list = async (query = '') => {
      const res = await fetch(`${server.url}/v1/sessions${query}`, { headers: { authorization: `Bearer ${token}` } });
      expect(res.status).toBe(200);
      return ((await res.json()) as Listing).sessions;
    };
    const ids = (rows: Listing['sessions']) => rows.map((r) => r.sessionId);
    const me = env.agent.as({ tenant: 'acme', user });
    const [waiting, archived, continued, active] = ['waiting', 'archived', 'continued', 'active'].map((k) => uniqueId(`list-${k}`)) as [string, string, string, string];

    // The oldest session waits for approval; three newer ones come after it.
    scriptWipe(waiting);
    expect((await send(waiting, 'wipe my notes')).status).toBe(202);
    await eventually(async () => (await me.getSession(waiting)).pendingConfirmations.length > 0, 'the held call');
    env.model.script([{ respond: { kind: 'text', text: 'Soon archived.' } }, { respond: { kind: 'text', text: 'Restored.' } }], { lane: archived });
    expect((await send(archived, 'one', { waitForTurn: true, options: { memory: { enabled: false } } })).status).toBe(200);
    await me.end(archived);
    await eventually(async () => (await env.client.workflow.getHandle(`session-${archived}`).describe()).status.name === 'COMPLETED', 'the session to archive', 30_000);
    const options = { sessionId: continued, namespace: { tenant: 'acme', user }, memory: { enabled: false }, limits: { maxHistoryEvents: 200, windowMaxTurns: 200, windowMaxTokens: 1_000_000 } };
    env.model.script(Array.from({ length: 40 }, (_, i) => ({ respond: { kind: 'text' as const, text: `Answer ${i}.` } })), { lane: continued });
    const handle = env.client.workflow.getHandle(`session-${continued}`);
    await me.ask(options, { text: 'message 0' });
    const firstRun = (await handle.describe()).runId;
    for (let i = 1; i < 40 && (await handle.describe()).runId === firstRun; i++) await me.ask(options, { text: `message ${i}` });
    expect((await handle.describe()).runId).not.toBe(firstRun);
    env.model.script([{ respond: { kind: 'text', text: 'Active.' } }], { lane: active });
    expect((await send(active, 'hi', { waitForTurn: true })).status).toBe(200);

    // Running sessions by default: the one waiting first even when the limit is 1 (it is the oldest).
    const running = await eventually(async () => {
      const rows = await list();
      return rows.length === 3 ? rows : null;
    }, 'the three running sessions listed');
    expect(ids(running)).toEqual([waiting, active, continued]);
    expect(ids(await list('?limit=1'))).toEqual([waiting]);
    // Closed ones when asked: after the running ones, with when they closed; the continued run is never a session of its own.
    const all = await eventually(async () => {
      const rows = await list('?state=any');
      return rows.length === 4 ? rows : null;
    }, 'the archived session listed');
    expect(ids(all)).toEqual([waiting, active, continued, archived]);
    expect(all[3]).toMatchObject({ status: 'archived', closedAt: expect.any(String) });
    expect(all.slice(0, 3).every((r) => r.closedAt === undefined)).toBe(true);
    expect(ids(await list('?status=archived'))).toEqual([archived]);
    expect(ids(await list('?state=closed'))).toEqual([archived]);
    expect(ids(await list('?state=any&limit=2'))).toEqual([waiting, active]);

    // Restored, the session is running again: its archived run no longer lists it as archived, and it is listed once.
    expect((await send(archived, 'two', { waitForTurn: true })).status).toBe(200);
    await eventually(async () => ((await list('?status=archived')).length === 0 ? true : null), 'the restored session to leave the archived list');
    expect(await list('?state=closed')).toEqual([]);
    const after = await list('?state=any');
    expect(ids(after).sort()).toEqual([waiting, archived, continued, active].sort());
    expect(after.find((r) => r.sessionId === archived)).toMatchObject({ status: 'active' });
    expect(after.find((r) => r.sessionId === archived)?.closedAt).toBeUndefined();

    const continuedStatus = await fetch(`${server.url}/v1/sessions?status=continued`, { headers: { authorization: `Bearer ${token}` } });
    expect(continuedStatus.status).toBe(422);
    expect(JSON.stringify(await problem(continuedStatus))).toMatch(/continue-as-new/);
    await me.deny(waiting, 'call_wipe', 'test over');
    for (const id of [archived, continued, active]) await me.end(id);
  }, 120_000);

  it('resumes an event stream with Last-Event-ID: the rest, in order, nothing twice', async () => {
    const sessionId = uniqueId('api-resume');
    env.model.script([{ respond: { kind: 'text', text: 'One two three four five six seven eight.' } }], { lane: sessionId });
    const { turnId } = (await (await call('POST', `/v1/sessions/${sessionId}/messages`, tokens.ana, { text: 'count' })).json()) as { turnId: string };
    const all = await readSse(`/v1/sessions/${sessionId}/events`, tokens.ana, turnDone(turnId));
    expect(all.length).toBeGreaterThan(4);
    const cut = all[2]!;
    const rest = await readSse(`/v1/sessions/${sessionId}/events`, tokens.ana, turnDone(turnId), { 'last-event-id': cut.id! });
    expect(rest.map((e) => e.id)).toEqual(all.slice(3).map((e) => e.id));
    const fromQuery = await readSse(`/v1/sessions/${sessionId}/events?from=${all[1]!.id}`, tokens.ana, turnDone(turnId));
    expect(fromQuery.map((e) => e.id)).toEqual(all.slice(1).map((e) => e.id));
    // Past the stream's end (a made-up offset, or a session that started afresh since): 409 naming the next offset,
    // where the stream used to stay open and silent. From the end itself, it waits for the next event, as before.
    const next = Number(all.at(-1)!.id) + 1;
    const asked: Array<[string, Record<string, string>]> = [
      [`?from=${next + 1}`, {}],
      ['', { 'last-event-id': String(next) }],
    ];
    for (const [query, headers] of asked) {
      const ahead = await call('GET', `/v1/sessions/${sessionId}/events${query}`, tokens.ana, undefined, headers);
      expect(ahead.status).toBe(409);
      expect(await ahead.json()).toMatchObject({ failureType: 'OffsetAhead', nextOffset: next, detail: expect.stringMatching(new RegExp(`offset ${next + 1} is ahead of it`)) });
    }
    const atEnd = new AbortController();
    const waiting = await fetch(`${base}/v1/sessions/${sessionId}/events?from=${next}`, { headers: { authorization: `Bearer ${tokens.ana}` }, signal: atEnd.signal });
    expect(waiting.status).toBe(200);
    atEnd.abort();
    await expect(env.agent.events(sessionId, { fromOffset: next + 1 }).next()).rejects.toMatchObject({ name: 'OffsetAheadError', nextOffset: next });
    // Strangers learn nothing of the offsets.
    expect((await call('GET', `/v1/sessions/${sessionId}/events?from=${next + 1}`, tokens.eve)).status).toBe(403);
  });

  it('Last-Event-ID resumes across continue-as-new: the rest of the events, contiguous, from the next run', async () => {
    const sessionId = uniqueId('api-can-resume');
    const options = { sessionId, namespace: { tenant: 'acme', user: 'ana' }, memory: { enabled: false }, limits: { maxHistoryEvents: 200, windowMaxTurns: 200, windowMaxTokens: 1_000_000 } };
    env.model.script(Array.from({ length: 40 }, (_, i) => ({ respond: { kind: 'text' as const, text: `Answer ${i}.` } })), { lane: sessionId });
    const handle = env.client.workflow.getHandle(`session-${sessionId}`);
    const first = await env.agent.ask(options, { text: 'message 0' });
    const firstRun = (await handle.describe()).runId;
    const seen = await readSse(`/v1/sessions/${sessionId}/events`, tokens.ana, turnDone(first.turnId));
    const lastId = Number(seen.at(-1)!.id);
    let last = first;
    for (let i = 1; i < 40 && (await handle.describe()).runId === firstRun; i++) last = await env.agent.ask(options, { text: `message ${i}` });
    expect((await handle.describe()).runId).not.toBe(firstRun);
    // One more turn on the new run, so the resumed read ends there.
    last = await env.agent.ask(options, { text: 'after the continue-as-new' });
    const rest = await readSse(`/v1/sessions/${sessionId}/events`, tokens.ana, turnDone(last.turnId), { 'last-event-id': String(lastId) });
    const ids = rest.map((e) => Number(e.id));
    expect(ids).toEqual(ids.map((_, i) => lastId + 1 + i));
    const texts = rest.filter((e) => e.event === 'turn_completed').map((e) => (JSON.parse(e.data) as { text: string }).text);
    expect(texts.at(-1)).toBe(last.turn.text);
    await env.agent.end(sessionId);
  }, 120_000);

  it('one event stream held open across continue-as-new and the archive gets every id once and in order, every turn, then status archived and end; so does a typed reader that pauses before the continue-as-new and resumes after the archive', async () => {
    const sessionId = uniqueId('api-one-stream');
    const options = { sessionId, namespace: { tenant: 'acme', user: 'ana' }, memory: { enabled: false }, limits: { maxHistoryEvents: 200, windowMaxTurns: 200, windowMaxTokens: 1_000_000 } };
    env.model.script(Array.from({ length: 40 }, (_, i) => ({ respond: { kind: 'text' as const, text: `Answer ${i}.` } })), { lane: sessionId });
    const handle = env.client.workflow.getHandle(`session-${sessionId}`);
    await env.agent.ask(options, { text: 'message 0' });
    const firstRun = (await handle.describe()).runId;
    const opened = hub.subscriptionsOpened;
    // The one connection of this test: open before the run changes, read until the stream ends.
    let turnsSeen = 0;
    const reading = readSse(`/v1/sessions/${sessionId}/events`, tokens.ana, (e) => {
      if (e.event === 'turn_completed') turnsSeen += 1;
      return e.event === 'end' || e.event === 'problem';
    });
    // The typed reader reads the first turn (its last poll goes to the first run), then nothing until the session has closed.
    const stopPaused = new AbortController();
    const paused = env.agent.events(sessionId, { signal: stopPaused.signal });
    const pausedOffsets: number[] = [];
    for (let r = await paused.next(); !r.done; r = await paused.next()) {
      pausedOffsets.push(r.value.offset);
      if (r.value.event.type === 'turn_completed') break;
    }
    await eventually(async () => turnsSeen === 1, 'the first turn on the open stream');
    let turns = 1;
    for (; turns < 40 && (await handle.describe()).runId === firstRun; turns++) await env.agent.ask(options, { text: `message ${turns}` });
    expect((await handle.describe()).runId).not.toBe(firstRun);
    // Ended at once: the next run may close before the stream's first poll reaches it.
    await env.agent.end(sessionId);
    const events = await reading;

    const withIds = events.filter((e) => e.id !== undefined);
    const ids = withIds.map((e) => Number(e.id));
    expect(ids).toEqual(ids.map((_, i) => i));
    const texts = events.filter((e) => e.event === 'turn_completed').map((e) => (JSON.parse(e.data) as { text: string }).text);
    expect(texts).toEqual(Array.from({ length: turns }, (_, i) => `Answer ${i}.`));
    expect(events.at(-1)).toMatchObject({ event: 'end' });
    const last = withIds.at(-1)!;
    expect(last.event).toBe('status_change');
    expect(JSON.parse(last.data)).toMatchObject({ type: 'status_change', status: 'archived', reason: 'ended by request' });
    // The server followed the session with the one subscription it opened for this stream.
    expect(hub.subscriptionsOpened - opened).toBe(1);

    // Resumed after the archive, the typed reader gets the same rest and ends (before, its stream polled the closed session forever).
    await eventually(async () => (await handle.describe()).status.name === 'COMPLETED', 'the session to close');
    const drained = (async () => {
      for (let r = await paused.next(); !r.done; r = await paused.next()) pausedOffsets.push(r.value.offset);
    })();
    drained.catch(() => undefined);
    let stuck: NodeJS.Timeout | undefined;
    const tooLong = new Promise<never>((_, reject) => {
      stuck = setTimeout(() => {
        stopPaused.abort();
        reject(new Error(`the typed reader did not end within 10 s of the archive; its last offset was ${pausedOffsets.at(-1)}`));
      }, 10_000);
    });
    await Promise.race([drained, tooLong]).finally(() => clearTimeout(stuck));
    expect(pausedOffsets).toEqual(ids);
  }, 60_000);

  it('an offset the session no longer keeps (after continue-as-new) is 410 TruncatedOffset naming the earliest kept; the typed client throws TruncatedOffsetError', async () => {
    const sessionId = uniqueId('api-trunc');
    // A window big enough never to fold (no summary calls to script), and the smallest history budget, so the run continues as new soon.
    const options = { sessionId, namespace: { tenant: 'acme', user: 'ana' }, memory: { enabled: false }, limits: { maxHistoryEvents: 200, windowMaxTurns: 200, windowMaxTokens: 1_000_000 } };
    // Long answers: the stream keeps its last 64 KB across continue-as-new, so these push the early events out.
    const long = Array.from({ length: 1_000 }, (_, i) => `w${i}`).join(' ');
    env.model.script(Array.from({ length: 60 }, () => ({ respond: { kind: 'text' as const, text: long } })), { lane: sessionId });
    const handle = env.client.workflow.getHandle(`session-${sessionId}`);
    const firstRun = (await env.agent.ask(options, { text: 'message 0' }), (await handle.describe()).runId);
    for (let i = 1; i < 60 && (await handle.describe()).runId === firstRun; i++) await env.agent.ask(options, { text: `message ${i}` });
    expect((await handle.describe()).runId).not.toBe(firstRun);
    const kept = await readSse(`/v1/sessions/${sessionId}/events`, tokens.ana, () => true);
    const earliest = Number(kept[0]!.id);
    expect(earliest).toBeGreaterThan(1);
    const gone = await call('GET', `/v1/sessions/${sessionId}/events`, tokens.ana, undefined, { 'last-event-id': '0' });
    expect(gone.status).toBe(410);
    expect(await problem(gone)).toMatchObject({ failureType: 'TruncatedOffset', earliestOffset: earliest });
    const typed = env.agent.events(sessionId, { fromOffset: 1 });
    await expect(typed.next()).rejects.toMatchObject({ name: 'TruncatedOffsetError', requestedOffset: 1, earliestOffset: earliest });
    await env.agent.end(sessionId);
  }, 120_000);

  it('events of an archived session come from the archive; after restore the offsets continue and Last-Event-ID resumes across both', async () => {
    const sessionId = uniqueId('api-archive');
    env.model.script(
      [
        { respond: { kind: 'text', text: 'Before the archive.' } },
        { respond: { kind: 'text', text: 'After the restore.' } },
      ],
      { lane: sessionId },
    );
    const handle = env.client.workflow.getHandle(`session-${sessionId}`);
    const first = (await (await call('POST', `/v1/sessions/${sessionId}/messages`, tokens.ana, { text: 'one', waitForTurn: true, options: { memory: { enabled: false } } })).json()) as { turnId: string };
    const live = await readSse(`/v1/sessions/${sessionId}/events`, tokens.ana, turnDone(first.turnId));
    expect((await call('POST', `/v1/sessions/${sessionId}/end`, tokens.ana)).status).toBe(202);
    await eventually(async () => (await handle.describe()).status.name === 'COMPLETED', 'the session to archive and close', 30_000);

    // The closed run cannot be polled: the archive serves what it published, then the stream ends.
    const archived = await readSse(`/v1/sessions/${sessionId}/events`, tokens.ana, (e) => e.event === 'end');
    const archivedIds = archived.filter((e) => e.id !== undefined).map((e) => Number(e.id));
    expect(archivedIds.slice(0, live.length)).toEqual(live.map((e) => Number(e.id)));
    expect(archivedIds).toEqual(archivedIds.map((_, i) => i));
    const text = archived.filter((e) => e.event === 'text_delta').map((e) => (JSON.parse(e.data) as { delta: string }).delta).join('');
    expect(text).toBe('Before the archive.');
    // Resuming from the middle, and the typed client, read the same archive; strangers are refused, not served.
    const tail = await readSse(`/v1/sessions/${sessionId}/events`, tokens.ana, (e) => e.event === 'end', { 'last-event-id': String(archivedIds[2]) });
    expect(tail.filter((e) => e.id !== undefined).map((e) => Number(e.id))).toEqual(archivedIds.slice(3));
    const typed: number[] = [];
    for await (const e of env.agent.events(sessionId, { fromOffset: 1 })) typed.push(e.offset);
    expect(typed).toEqual(archivedIds.slice(1));
    await expect(env.agent.as({ tenant: 'evil', user: 'eve' }).events(sessionId).next()).rejects.toMatchObject({ name: 'NotAuthorizedError' });
    expect((await call('GET', `/v1/sessions/${sessionId}/events`, tokens.eve)).status).toBe(403);
    // Raw callers of the archive reader (another SDK, the CLI): bad input and strangers fail the run with a named type, never a workflow task.
    const ana = { tenant: 'acme', user: 'ana' };
    const raw: Array<[unknown, string]> = [
      [null, 'NotAuthorized'],
      [{ sessionId, fromOffset: 0 }, 'NotAuthorized'],
      [{ sessionId, fromOffset: 0, principal: { tenant: 'evil', user: 'eve' } }, 'NotAuthorized'],
      [{ sessionId: 5, fromOffset: 0, principal: ana }, 'SessionInputInvalid'],
      [{ sessionId, fromOffset: -1, principal: ana }, 'SessionInputInvalid'],
      [{ sessionId, fromOffset: 'x'.repeat(10_000), principal: ana }, 'SessionInputInvalid'],
    ];
    for (const [input, type] of raw) {
      const workflowId = uniqueId('raw-archive-read');
      const failure = await env.client.workflow.execute('readSessionArchive', { taskQueue: env.taskQueue, workflowId, args: [input] }).then(
        () => undefined,
        (err: { cause?: { type?: string; message?: string } }) => err.cause,
      );
      expect(failure).toMatchObject({ type });
      expect(failure?.message).not.toContain('Before the archive');
      const events = (await env.client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
      expect(events.filter((e) => e.workflowTaskFailedEventAttributes)).toEqual([]);
    }

    // A new message restores the session; its run continues the offsets, so the last id seen resumes across the restore.
    const lastId = archivedIds.at(-1)!;
    const second = (await (await call('POST', `/v1/sessions/${sessionId}/messages`, tokens.ana, { text: 'two', waitForTurn: true })).json()) as { turnId: string };
    const resumed = await readSse(`/v1/sessions/${sessionId}/events`, tokens.ana, turnDone(second.turnId), { 'last-event-id': String(lastId) });
    expect(Number(resumed[0]!.id)).toBe(lastId + 1);
    const resumedIds = resumed.map((e) => Number(e.id));
    expect(resumedIds).toEqual(resumedIds.map((_, i) => lastId + 1 + i));
    expect(resumed.filter((e) => e.event === 'text_delta').map((e) => (JSON.parse(e.data) as { delta: string }).delta).join('')).toBe('After the restore.');
    // From the start: the archived events, then the restored run's, one sequence with nothing missing or twice.
    const whole = await readSse(`/v1/sessions/${sessionId}/events`, tokens.ana, turnDone(second.turnId));
    const wholeIds = whole.map((e) => Number(e.id));
    expect(wholeIds).toEqual(wholeIds.map((_, i) => i));
    expect(wholeIds.at(-1)).toBe(resumedIds.at(-1));
    await env.agent.end(sessionId);
  }, 120_000);

  it('many readers of one session share one subscription; a principal may hold at most 3 streams, asked for one by one or all at once', async () => {
    const sessionId = uniqueId('api-fan');
    env.model.script([{ respond: { kind: 'text', text: 'Fan out.' } }], { lane: sessionId });
    const { turnId } = (await (await call('POST', `/v1/sessions/${sessionId}/messages`, tokens.ana, { text: 'go' })).json()) as { turnId: string };
    const opened = hub.subscriptionsOpened;
    const readers = await Promise.all([tokens.ana, tokens.ana, tokens.boss].map((t) => readSse(`/v1/sessions/${sessionId}/events`, t, turnDone(turnId))));
    expect(hub.subscriptionsOpened - opened).toBe(1);
    for (const r of readers) expect(r.map((e) => e.id)).toEqual(readers[0]!.map((e) => e.id));
    // Three open streams for ana, then a fourth is refused.
    const controllers = [0, 1, 2].map(() => new AbortController());
    const open = await Promise.all(controllers.map((c) => fetch(`${base}/v1/sessions/${sessionId}/events`, { headers: { authorization: `Bearer ${tokens.ana}` }, signal: c.signal })));
    expect(open.map((r) => r.status)).toEqual([200, 200, 200]);
    const fourth = await call('GET', `/v1/sessions/${sessionId}/events`, tokens.ana);
    expect(fourth.status).toBe(429);
    expect(await problem(fourth)).toMatchObject({ failureType: 'TooManyStreams' });
    // Closing them frees the slots.
    for (const c of controllers) c.abort();
    const again = await eventually(async () => {
      const res = await call('GET', `/v1/sessions/${sessionId}/events`, tokens.ana);
      if (res.status === 200) return res;
      await res.body?.cancel();
      return null;
    }, 'a stream slot to free up', 5_000);
    await again.body?.cancel();

    // Many at once, each waiting on the session before it streams (from=1 reads the session's next offset first):
    // the limit holds, and the slots all come back.
    const parallel = Array.from({ length: 8 }, () => new AbortController());
    const answers = await Promise.all(parallel.map((c) => fetch(`${base}/v1/sessions/${sessionId}/events?from=1`, { headers: { authorization: `Bearer ${tokens.ana}` }, signal: c.signal })));
    expect(answers.map((r) => r.status).sort()).toEqual([200, 200, 200, 429, 429, 429, 429, 429]);
    for (const r of answers) if (r.status === 429) await r.body?.cancel();
    for (const c of parallel) c.abort();
    const refill = await eventually(async () => {
      const res = await Promise.all([0, 1, 2].map(() => fetch(`${base}/v1/sessions/${sessionId}/events?from=1`, { headers: { authorization: `Bearer ${tokens.ana}` } })));
      if (res.every((r) => r.status === 200)) return res;
      await Promise.all(res.map((r) => r.body?.cancel()));
      return null;
    }, 'three stream slots to free up', 5_000);
    const over = await call('GET', `/v1/sessions/${sessionId}/events?from=1`, tokens.ana);
    expect(over.status).toBe(429);
    await Promise.all(refill.map((r) => r.body?.cancel()));
  });

  it('a tenant or user name holding a quote or backslash cannot list another\'s sessions: 422 naming why', async () => {
    // ana has sessions by now (tenant acme); names that a dropped quote or backslash would turn into hers.
    const minted = [mintToken({ tenant: 'acme"', user: 'x', roles: ['admin'] }), mintToken({ tenant: 'acme\\', user: 'x', roles: ['admin'] }), mintToken({ tenant: 'acme', user: 'an"a' })];
    const other = createApi({ agent: env.agent, tokens: new TokenBook(minted.map((m) => m.entry)), limits: { requestsPerMinute: 100_000 } });
    const server = await listen(other.app, 0);
    closers.push(async () => {
      await server.close();
      other.hub.close();
    });
    for (const { token } of minted) {
      const res = await fetch(`${server.url}/v1/sessions?state=any&limit=200`, { headers: { authorization: `Bearer ${token}` } });
      expect(res.status).toBe(422);
      expect(await problem(res)).toMatchObject({ failureType: 'UnlistableName' });
    }
  });

  it('429 with Retry-After past the per-token rate, for that token only', async () => {
    const a = mintToken({ tenant: 'acme', user: 'ana' });
    const b = mintToken({ tenant: 'acme', user: 'bob' });
    const limited = createApi({ agent: env.agent, tokens: new TokenBook([a.entry, b.entry]), limits: { requestsPerMinute: 3 } });
    const server = await listen(limited.app, 0);
    closers.push(server.close);
    const get = (token: string) => fetch(`${server.url}/v1/sessions/${uniqueId('nobody')}`, { headers: { authorization: `Bearer ${token}` } });
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await get(a.token)).status);
    expect(statuses).toEqual([404, 404, 404, 429]);
    const limitedRes = await get(a.token);
    expect(Number(limitedRes.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(await problem(limitedRes)).toMatchObject({ status: 429, failureType: 'RateLimited' });
    expect((await get(b.token)).status).toBe(404);
  });

  it('interrupt and end: the owner may, an outsider gets 403, ending needs the owner or an admin', async () => {
    const sessionId = uniqueId('api-end');
    env.model.script([{ respond: { kind: 'text', text: 'Hi.' } }], { lane: sessionId });
    await call('POST', `/v1/sessions/${sessionId}/messages`, tokens.ana, { text: 'hi', waitForTurn: true });
    expect((await call('POST', `/v1/sessions/${sessionId}/interrupt`, tokens.eve, { reason: 'x' })).status).toBe(403);
    expect((await call('POST', `/v1/sessions/${sessionId}/interrupt`, tokens.ana)).status).toBe(202);
    expect((await call('POST', `/v1/sessions/${sessionId}/end`, tokens.boss)).status).toBe(403);
    expect((await call('POST', `/v1/sessions/${sessionId}/end`, tokens.admin, { reason: 'cleanup' })).status).toBe(202);
  });

  it('memories: the user and a tenant admin list, search and delete them, the audit trail keeps the deleted one; others get 403', async () => {
    const user = uniqueId('memuser');
    const now = new Date();
    const repo = new MemoryRepository(env.db);
    await repo.ensureIndexes();
    const scoped = repo.forNamespace({ tenant: 'acme', user });
    const common = { source: userSource('s-1', 'turn-1'), statedAt: now, expiresAt: new Date(now.getTime() + 30 * DAY) };
    await scoped.writeFact(fact('home city', 'Lisbon', common), { actor: { by: 'import' }, now });
    await scoped.writeFact(fact('team', 'platform', common), { actor: { by: 'import' }, now });
    const { token, entry } = mintToken({ tenant: 'acme', user });
    const own = createApi({ agent: env.agent, tokens: new TokenBook([entry]) });
    const server = await listen(own.app, 0);
    closers.push(server.close);
    const at = (path: string, init: RequestInit = {}, who = token) =>
      fetch(`${server.url}${path}`, { ...init, headers: { authorization: `Bearer ${who}`, ...(init.body ? { 'content-type': 'application/json' } : {}), ...(init.headers ?? {}) } });
    type List = { memories: Array<{ id: string; text: string; status: string }> };
    const mine = (await (await at(`/v1/users/acme/${user}/memories`)).json()) as List;
    expect(mine.memories.map((m) => m.text).sort()).toEqual(["The user's home city is Lisbon.", "The user's team is platform."]);
    const searched = (await (await at(`/v1/users/acme/${user}/memories?q=LISBON`)).json()) as List;
    expect(searched.memories.map((m) => m.text)).toEqual(["The user's home city is Lisbon."]);
    for (const who of [tokens.ana, tokens.boss, tokens.eve]) {
      const refused = await call('GET', `/v1/users/acme/${user}/memories`, who);
      expect(refused.status).toBe(403);
      expect(await problem(refused)).toMatchObject({ failureType: 'NotAuthorized' });
    }
    const byAdmin = await call('GET', `/v1/users/acme/${user}/memories`, tokens.admin);
    expect(byAdmin.status).toBe(200);
    const target = searched.memories[0]!;
    expect((await call('DELETE', `/v1/users/acme/${user}/memories/${target.id}`, tokens.eve)).status).toBe(403);
    const deleted = await at(`/v1/users/acme/${user}/memories/${target.id}`, { method: 'DELETE', body: JSON.stringify({ reason: 'moved' }) });
    expect(deleted.status).toBe(200);
    expect(await deleted.json()).toMatchObject({ deleted: true, memory: { id: target.id } });
    const again = await at(`/v1/users/acme/${user}/memories/${target.id}`, { method: 'DELETE' });
    expect(again.status).toBe(404);
    const trail = (await (await at(`/v1/users/acme/${user}/memories?status=deleted`)).json()) as List;
    expect(trail.memories.map((m) => [m.id, m.status])).toEqual([[target.id, 'deleted']]);
    expect((await at(`/v1/users/acme/${user}/memories/not-an-id`, { method: 'DELETE' })).status).toBe(422);
  });

  it('an approvals inbox of many sessions reads them a few at a time, and lists every held call', async () => {
    const owner = uniqueId('inbox-user');
    const ids = Array.from({ length: 12 }, () => uniqueId('api-many'));
    for (const id of ids) scriptWipe(id);
    const ownerToken = mintToken({ tenant: 'acme', user: owner });
    const approver = mintToken({ tenant: 'acme', user: 'inbox-boss', roles: ['approver'] });
    // The API's client, counting how many session reads are in flight at once.
    let inFlight = 0;
    let most = 0;
    const counting = (client: AgentClient): AgentClient =>
      new Proxy(client, {
        get(target, prop, receiver) {
          if (prop === 'as') return (p: Parameters<AgentClient['as']>[0]) => counting(target.as(p));
          if (prop === 'getSession') {
            return async (sessionId: string) => {
              most = Math.max(most, ++inFlight);
              try {
                return await target.getSession(sessionId);
              } finally {
                inFlight--;
              }
            };
          }
          return Reflect.get(target, prop, receiver);
        },
      });
    const server = await listen(createApi({ agent: counting(env.agent), tokens: new TokenBook([ownerToken.entry, approver.entry]) }).app, 0);
    closers.push(server.close);
    const get = (path: string, token: string) => fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${token}` } });
    const post = (path: string, token: string, body: unknown) => fetch(`${server.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    for (const id of ids) expect((await post(`/v1/sessions/${id}/messages`, ownerToken.token, { text: 'wipe my notes' })).status).toBe(202);
    type Inbox = { approvals: Array<{ sessionId: string }> };
    const listed = await eventually(async () => {
      most = 0;
      const items = ((await (await get('/v1/approvals?limit=200', approver.token)).json()) as Inbox).approvals.filter((a) => ids.includes(a.sessionId));
      return items.length === ids.length ? items : null;
    }, 'every held call in the inbox', 30_000);
    expect(listed.map((a) => a.sessionId).sort()).toEqual([...ids].sort());
    expect(most).toBeGreaterThan(1);
    expect(most).toBeLessThanOrEqual(8);
    for (const id of ids) await post(`/v1/sessions/${id}/tool-calls/call_wipe/decision`, ownerToken.token, { approved: false });
  }, 60_000);

  it('memories kept under a project are listed, deleted and audited with ?project=, and stay apart from the user\'s others', async () => {
    const user = uniqueId('memproject');
    const now = new Date();
    const repo = new MemoryRepository(env.db);
    await repo.ensureIndexes();
    const common = { source: userSource('s-1', 'turn-1'), statedAt: now, expiresAt: new Date(now.getTime() + 30 * DAY) };
    await repo.forNamespace({ tenant: 'acme', user }).writeFact(fact('home city', 'Lisbon', common), { actor: { by: 'import' }, now });
    const inProject = await repo.forNamespace({ tenant: 'acme', user, project: 'apollo' }).writeFact(fact('launch date', 'Friday', common), { actor: { by: 'import' }, now });
    const { token, entry } = mintToken({ tenant: 'acme', user });
    const server = await listen(createApi({ agent: env.agent, tokens: new TokenBook([entry]) }).app, 0);
    closers.push(server.close);
    const at = (method: string, path: string, body?: unknown) =>
      fetch(`${server.url}${path}`, { method, headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) }, ...(body ? { body: JSON.stringify(body) } : {}) });
    const memories = `/v1/users/acme/${user}/memories`;
    type List = { memories: Array<{ id: string; text: string }> };
    const texts = async (path: string) => ((await (await at('GET', path)).json()) as List).memories.map((m) => m.text);
    expect(await texts(memories)).toEqual(["The user's home city is Lisbon."]);
    expect(await texts(`${memories}?project=apollo`)).toEqual(["The user's launch date is Friday."]);
    const outside = await at('DELETE', `${memories}/${inProject.memoryId}`);
    expect(outside.status).toBe(404);
    expect(await outside.json()).toMatchObject({ detail: expect.stringMatching(/outside any project \(a project memory needs \?project=\)/) });
    expect((await at('DELETE', `${memories}/${inProject.memoryId}?project=apollo`, { reason: 'launch moved' })).status).toBe(200);
    expect(await texts(`${memories}?project=apollo`)).toEqual([]);
    const trail = (await (await at('GET', `${memories}/${inProject.memoryId}/audit?project=apollo`)).json()) as { entries: Array<{ action: string; reason: string }> };
    expect(trail.entries.map((e) => [e.action, e.reason])).toEqual([
      ['create', expect.any(String)],
      ['delete', 'launch moved'],
    ]);
    expect(await texts(memories)).toEqual(["The user's home city is Lisbon."]);
  });

  it('a memory\'s audit trail is read over HTTP (its user or a tenant admin; others 403): each change with reason, actor, before and after; a deletion names who deleted it, user or admin', async () => {
    const user = uniqueId('memaudit');
    const now = new Date();
    const repo = new MemoryRepository(env.db);
    await repo.ensureIndexes();
    const scoped = repo.forNamespace({ tenant: 'acme', user });
    const common = { source: userSource('s-1', 'turn-1'), statedAt: now, expiresAt: new Date(now.getTime() + 30 * DAY) };
    const city = await scoped.writeFact(fact('home city', 'Lisbon', common), { actor: { by: 'import' }, now });
    const team = await scoped.writeFact(fact('team', 'platform', common), { actor: { by: 'import' }, now });
    const { token, entry } = mintToken({ tenant: 'acme', user });
    const server = await listen(createApi({ agent: env.agent, tokens: new TokenBook([entry, book.lookup(tokens.admin)!, book.lookup(tokens.ana)!]) }).app, 0);
    closers.push(server.close);
    const at = (method: string, path: string, who: string, body?: unknown) =>
      fetch(`${server.url}${path}`, { method, headers: { authorization: `Bearer ${who}`, ...(body ? { 'content-type': 'application/json' } : {}) }, ...(body ? { body: JSON.stringify(body) } : {}) });
    const memories = `/v1/users/acme/${user}/memories`;
    type Trail = { memoryId: string; entries: Array<{ version: number; action: string; reason: string; at: string; actor: Record<string, unknown>; before: { status: string; text: string } | null; after: { status: string; text: string } }> };

    expect((await at('DELETE', `${memories}/${city.memoryId}`, token, { reason: 'moved to Porto' })).status).toBe(200);
    expect((await at('DELETE', `${memories}/${team.memoryId}`, tokens.admin)).status).toBe(200);

    const res = await at('GET', `${memories}/${city.memoryId}/audit`, token);
    expect(res.status).toBe(200);
    const own = (await res.json()) as Trail;
    expect(own.memoryId).toBe(city.memoryId);
    expect(own.entries.map((e) => [e.version, e.action])).toEqual([
      [1, 'create'],
      [2, 'delete'],
    ]);
    expect(own.entries[0]).toMatchObject({ actor: { by: 'import' }, before: null, after: { status: 'active', text: "The user's home city is Lisbon." } });
    expect(own.entries[1]).toMatchObject({
      reason: 'moved to Porto',
      actor: { by: 'user', principal: { tenant: 'acme', user } },
      before: { status: 'active', text: "The user's home city is Lisbon." },
      after: { status: 'deleted' },
    });
    expect(Date.parse(own.entries[1]!.at)).toBeGreaterThanOrEqual(Date.parse(own.entries[0]!.at));
    // An admin's deletion is recorded as the admin's, with their principal; the admin reads it too.
    const byAdmin = (await (await at('GET', `${memories}/${team.memoryId}/audit`, tokens.admin)).json()) as Trail;
    expect(byAdmin.entries.at(-1)).toMatchObject({ action: 'delete', reason: 'deleted by an admin', actor: { by: 'admin', principal: { tenant: 'acme', user: 'root' } } });
    // The same access as the list: a colleague and another tenant are refused; an unknown id is 404, a malformed one 422.
    for (const who of [tokens.ana, tokens.eve]) {
      const refused = await (who === tokens.eve ? call('GET', `${memories}/${city.memoryId}/audit`, who) : at('GET', `${memories}/${city.memoryId}/audit`, who));
      expect(refused.status).toBe(403);
      expect(JSON.stringify(await problem(refused))).not.toContain('Lisbon');
    }
    const unknown = await at('GET', `${memories}/mem_${'0'.repeat(24)}/audit`, token);
    expect(unknown.status).toBe(404);
    expect(await problem(unknown)).toMatchObject({ failureType: 'MemoryNotFound' });
    expect((await at('GET', `${memories}/not-an-id/audit`, token)).status).toBe(422);
    // Another user's id under one's own path reads nothing of theirs.
    const otherUser = repo.forNamespace({ tenant: 'acme', user: `${user}-other` });
    const theirs = await otherUser.writeFact(fact('secret', 'kept', common), { actor: { by: 'import' }, now });
    expect((await at('GET', `${memories}/${theirs.memoryId}/audit`, token)).status).toBe(404);
  });

  it('memory search looks through all of a user\'s memories in the database, before the limit, with the query taken literally, and pages with next', async () => {
    const user = uniqueId('memsearch');
    const repo = new MemoryRepository(env.db);
    await repo.ensureIndexes();
    const scoped = repo.forNamespace({ tenant: 'acme', user });
    const minute = 60_000;
    const start = Date.now() - 60 * minute;
    const write = async (predicate: string, value: string, minutes: number) => {
      const now = new Date(start + minutes * minute);
      await scoped.writeFact(fact(predicate, value, { source: userSource('s-1', `turn-${minutes}`), statedAt: now, expiresAt: new Date(now.getTime() + 30 * DAY) }), { actor: { by: 'import' }, now });
    };
    // The matches are the oldest memories; six newer ones come after them.
    await write('old city', 'Lisbon', 1);
    await write('language', 'C++ (mostly)', 2);
    await write('birth city', 'lisbon', 3);
    await write('work city', 'LISBON', 4);
    for (let i = 1; i <= 6; i++) await write(`note ${i}`, 'nothing to see', 10 + i);
    const { token, entry } = mintToken({ tenant: 'acme', user });
    const own = createApi({ agent: env.agent, tokens: new TokenBook([entry]) });
    const server = await listen(own.app, 0);
    closers.push(server.close);
    type Page = { memories: Array<{ text: string }>; next?: string };
    const list = async (query: string) => {
      const res = await fetch(`${server.url}/v1/users/acme/${user}/memories?${query}`, { headers: { authorization: `Bearer ${token}` } });
      expect(res.status).toBe(200);
      return (await res.json()) as Page;
    };
    const texts = (page: Page) => page.memories.map((m) => m.text);
    // Newer non-matching memories no longer hide the older matches.
    expect(texts(await list('q=lisbon&limit=5'))).toEqual(["The user's work city is LISBON.", "The user's birth city is lisbon.", "The user's old city is Lisbon."]);
    // The limit applies to matches; next continues after the last one, nothing twice.
    const first = await list('q=Lisbon&limit=2');
    expect(texts(first)).toEqual(["The user's work city is LISBON.", "The user's birth city is lisbon."]);
    expect(first.next).toEqual(expect.any(String));
    const second = await list(`q=Lisbon&limit=2&cursor=${encodeURIComponent(first.next!)}`);
    expect(texts(second)).toEqual(["The user's old city is Lisbon."]);
    expect(second.next).toBeUndefined();
    const pages: string[] = [];
    for (let cursor: string | undefined, n = 0; n < 10; n++) {
      const page = await list(`limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      pages.push(...texts(page));
      if (!page.next) break;
      cursor = page.next;
    }
    expect(pages).toHaveLength(10);
    expect(new Set(pages).size).toBe(10);
    // The query is text, not a pattern.
    expect(texts(await list(`q=${encodeURIComponent('C++ (')}`))).toEqual(["The user's language is C++ (mostly)."]);
    expect(texts(await list(`q=${encodeURIComponent('.*')}`))).toEqual([]);
    expect(texts(await list(`q=${encodeURIComponent('[a-z]')}`))).toEqual([]);
    const bad = await fetch(`${server.url}/v1/users/acme/${user}/memories?cursor=page-2`, { headers: { authorization: `Bearer ${token}` } });
    expect(bad.status).toBe(422);
  });

  it('1,000 randomized cross-principal requests on another user\'s session: 0 accepted, every answer 403', async () => {
    const sessionId = uniqueId('api-tenancy');
    scriptWipe(sessionId);
    await call('POST', `/v1/sessions/${sessionId}/messages`, tokens.ana, { text: 'wipe my notes' });
    await eventually(async () => ((await (await call('GET', `/v1/sessions/${sessionId}`, tokens.ana)).json()) as { pendingConfirmations: unknown[] }).pendingConfirmations.length > 0, 'the confirmation');
    const random = seededRandom(20261201);
    const outsiders = [tokens.eve, tokens.bob];
    const requests: Array<(t: string) => Promise<Response>> = [
      (t) => call('GET', `/v1/sessions/${sessionId}`, t),
      (t) => call('POST', `/v1/sessions/${sessionId}/messages`, t, { text: 'let me in' }),
      (t) => call('POST', `/v1/sessions/${sessionId}/messages`, t, { text: 'let me in', options: { project: 'x' } }, { 'idempotency-key': 'k' }),
      (t) => call('POST', `/v1/sessions/${sessionId}/tool-calls/call_wipe/decision`, t, { approved: true }),
      (t) => call('POST', `/v1/sessions/${sessionId}/interrupt`, t),
      (t) => call('POST', `/v1/sessions/${sessionId}/inputs/call_wipe%3A1`, t, { action: 'decline' }),
      (t) => call('POST', `/v1/sessions/${sessionId}/end`, t),
      (t) => call('GET', `/v1/sessions/${sessionId}/events`, t),
    ];
    const statuses = new Map<number, number>();
    // One at a time: concurrent updates that the workflow rejects contend for its workflow task
    // (about 2 s per batch of 10 here), which would measure the server, not the API.
    for (let i = 0; i < 1_000; i++) {
      const res = await requests[Math.floor(random() * requests.length)]!(outsiders[Math.floor(random() * outsiders.length)]!);
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      await res.body?.cancel();
    }
    expect(Object.fromEntries(statuses)).toEqual({ 403: 1_000 });
    const view = (await (await call('GET', `/v1/sessions/${sessionId}`, tokens.ana)).json()) as { pendingConfirmations: unknown[]; status: string; version: number };
    expect(view.pendingConfirmations).toHaveLength(1);
    expect(view.version).toBe(1);
    expect(log.runs.filter((r) => r.key.startsWith(`${sessionId}:`))).toHaveLength(0);
  }, 120_000);

  it('randomized cross-principal requests on the lists, the approvals inbox, memories and usage: no row or item of another tenant or user in any answer, every forbidden call 403 (another\'s namespace) or 404 (another\'s memory under one\'s own)', async () => {
    // What there is to leak: a session of ana's and one of eve's, each holding a call for approval (listed, in an inbox, with usage), and memories of a user of acme.
    const anaSession = uniqueId('api-leak-ana');
    const eveSession = uniqueId('api-leak-eve');
    scriptWipe(anaSession);
    scriptWipe(eveSession);
    const victim = uniqueId('memvictim');
    const marker = uniqueId('marker');
    const now = new Date();
    const repo = new MemoryRepository(env.db);
    const common = { source: userSource('s-1', 'turn-1'), statedAt: now, expiresAt: new Date(now.getTime() + 30 * DAY) };
    const scoped = repo.forNamespace({ tenant: 'acme', user: victim });
    const [, , memoryIds] = await Promise.all([
      call('POST', `/v1/sessions/${anaSession}/messages`, tokens.ana, { text: 'wipe my notes', options: { memory: { enabled: false } } }),
      call('POST', `/v1/sessions/${eveSession}/messages`, tokens.eve, { text: 'wipe my notes', options: { memory: { enabled: false } } }),
      repo.ensureIndexes().then(() => Promise.all([fact('home city', `Lisbon ${marker}`, common), fact('team', `platform ${marker}`, common)].map(async (f) => (await scoped.writeFact(f, { actor: { by: 'import' }, now })).memoryId))),
    ]);
    const victimMemories = `/v1/users/acme/${victim}/memories`;
    type Row = { sessionId: string; tenant: string; user: string };
    const json = async <T>(res: Response) => {
      expect(res.status).toBe(200);
      return (await res.json()) as T;
    };
    // The owners and the admin see all of it, so an empty answer below is a refusal, not a lack of data.
    const listed = (token: string, sessionId: string) => async () => ((await json<{ approvals: Row[] }>(await call('GET', '/v1/approvals', token))).approvals.some((a) => a.sessionId === sessionId) ? true : null);
    await Promise.all([
      eventually(listed(tokens.boss, anaSession), 'ana\'s call in the approver\'s inbox'),
      eventually(listed(tokens.eve, eveSession), 'eve\'s call in her inbox'),
      eventually(async () => ((await json<{ total: { calls: number } }>(await call('GET', `/v1/usage?sessionId=${anaSession}`, tokens.ana))).total.calls > 0 ? true : null), 'ana\'s usage recorded'),
    ]);
    expect((await json<{ memories: Array<{ id: string }> }>(await call('GET', victimMemories, tokens.admin))).memories.map((m) => m.id).sort()).toEqual([...memoryIds].sort());

    type Caller = { token: string; tenant: string; user: string; approver: boolean; foreign: string[] };
    const memoryLeaks = [`Lisbon ${marker}`, `platform ${marker}`, ...memoryIds];
    const callers: Caller[] = [
      { token: tokens.eve, tenant: 'evil', user: 'eve', approver: false, foreign: [anaSession, ...memoryLeaks] },
      { token: tokens.bob, tenant: 'acme', user: 'bob', approver: false, foreign: [anaSession, eveSession, ...memoryLeaks] },
      { token: tokens.boss, tenant: 'acme', user: 'boss', approver: true, foreign: [eveSession, ...memoryLeaks] },
    ];
    /** Rows a caller may see: their tenant's, and only their own unless they approve. */
    const mayRead = (c: Caller, r: Row) => r.tenant === c.tenant && (c.approver || r.user === c.user);
    const random = seededRandom(20261202);
    const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)]!;
    // Every probe in each of its forms for every caller, then 24 drawn at random. Each memory and usage call the server answers (not
    // refused at the door) is a short workflow of its own, about 150 ms here: those have few forms, and weight 1 in the draw against 4.
    type Probe = { weight: number; status: number; method?: 'GET' | 'DELETE'; paths: Array<(c: Caller) => string>; rows?: (body: Record<string, unknown>) => Row[]; check?: (body: Record<string, unknown>) => void };
    const own = (c: Caller) => `/v1/users/${c.tenant}/${c.user}/memories`;
    const fixed = (...paths: string[]) => paths.map((p) => () => p);
    const probes: Probe[] = [
      { weight: 4, status: 200, paths: fixed('/v1/sessions', '/v1/sessions?user=ana', '/v1/sessions?user=eve', '/v1/sessions?status=awaiting_approval', '/v1/sessions?state=any&limit=200'), rows: (b) => b.sessions as Row[] },
      { weight: 4, status: 200, paths: fixed('/v1/approvals', '/v1/approvals?limit=200'), rows: (b) => b.approvals as Row[] },
      { weight: 4, status: 403, paths: fixed(victimMemories, `${victimMemories}?q=${marker}`, `${victimMemories}?status=active,deleted`, `${victimMemories}?kind=fact&limit=500`) },
      { weight: 4, status: 403, paths: [() => `${victimMemories}/${pick(memoryIds)}/audit`] },
      { weight: 4, status: 403, method: 'DELETE', paths: [() => `${victimMemories}/${pick(memoryIds)}`] },
      { weight: 1, status: 200, paths: [(c) => `${own(c)}?q=${marker}`], check: (b) => expect(b.memories).toEqual([]) },
      { weight: 1, status: 404, paths: [(c) => `${own(c)}/${pick(memoryIds)}/audit`] },
      { weight: 1, status: 404, method: 'DELETE', paths: [(c) => `${own(c)}/${pick(memoryIds)}`] },
      { weight: 1, status: 403, paths: fixed('/v1/usage?user=ana', '/v1/usage?all=true&days=7') },
      { weight: 1, status: 200, paths: fixed(`/v1/usage?sessionId=${anaSession}&days=7`), check: (b) => expect(b).toMatchObject({ rows: [], total: { calls: 0 } }) },
    ];
    const weighted = probes.flatMap((p) => Array.from({ length: p.weight }, () => p));
    const plan = [
      ...callers.flatMap((caller) => probes.flatMap((probe) => probe.paths.map((path) => ({ probe, caller, path })))),
      ...Array.from({ length: 24 }, () => {
        const probe = pick(weighted);
        return { probe, caller: pick(callers), path: pick(probe.paths) };
      }),
    ];
    const mismatches: string[] = [];
    let rowsChecked = 0;
    // One at a time: the workflows behind them share the worker either way (eight at once took as long).
    for (const { probe, caller, path: pathOf } of plan) {
      const path = pathOf(caller);
      const res = await call(probe.method ?? 'GET', path, caller.token);
      const text = await res.text();
      const where = `${caller.user} ${probe.method ?? 'GET'} ${path}`;
      if (res.status !== probe.status) mismatches.push(`${where}: ${res.status}, not ${probe.status}`);
      const failureType = { 403: 'NotAuthorized', 404: 'MemoryNotFound' }[res.status];
      if (failureType && (JSON.parse(text) as { failureType?: string }).failureType !== failureType) mismatches.push(`${where}: not a ${failureType} problem: ${text.slice(0, 200)}`);
      // An id the caller sent may come back in the problem's detail; anything else of another's may not.
      for (const s of caller.foreign) if (text.includes(s) && !path.includes(s)) mismatches.push(`${where}: the answer holds ${s}`);
      if (res.status !== 200) continue;
      const body = JSON.parse(text) as Record<string, unknown>;
      for (const row of probe.rows?.(body) ?? []) {
        rowsChecked += 1;
        if (!mayRead(caller, row)) mismatches.push(`${where}: a row of ${row.tenant}/${row.user} (${row.sessionId})`);
      }
      probe.check?.(body);
    }
    expect(mismatches).toEqual([]);
    // Not vacuous: the callers' own rows were there to check (eve's session, the tenant's for the approver).
    expect(rowsChecked).toBeGreaterThan(0);
    // Nothing was changed: the memories are all there and active, ana's call still waits.
    const after = await json<{ memories: Array<{ id: string; status: string }> }>(await call('GET', victimMemories, tokens.admin));
    expect(after.memories.map((m) => [m.id, m.status]).sort()).toEqual(memoryIds.map((id) => [id, 'active']).sort());
    expect(((await json<{ pendingConfirmations: unknown[] }>(await call('GET', `/v1/sessions/${anaSession}`, tokens.ana))).pendingConfirmations)).toHaveLength(1);
    for (const [token, id] of [[tokens.ana, anaSession], [tokens.eve, eveSession]] as const) await call('POST', `/v1/sessions/${id}/tool-calls/call_wipe/decision`, token, { approved: false, reason: 'test over' });
  }, 60_000);

  /** `npm run api` as a process of its own (api/main.ts), with these settings over the test's; resolves once it listens. */
  async function startApiMain(settings: Record<string, string>): Promise<{ url: string; output: () => string }> {
    const child = spawn(process.execPath, ['--import', 'tsx', 'api/main.ts'], {
      env: { ...process.env, API_PORT: '0', TEMPORAL_TASK_QUEUE: env.taskQueue, ...settings },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    closers.push(async () => void child.kill('SIGTERM'));
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const url = await eventually(() => /API on (http:\/\/\S+) /.exec(out)?.[1] ?? (child.exitCode !== null ? Promise.reject(new Error(out)) : null), 'the API to listen', 30_000);
    return { url, output: () => out };
  }

  it('npm run api: the entry point starts from the environment and answers with its tokens, read from API_TOKENS_FILE', async () => {
    const { token, entry } = mintToken({ tenant: 'acme', user: 'ana' });
    const dir = await mkdtemp(join(tmpdir(), 'api-tokens-'));
    closers.push(() => rm(dir, { recursive: true, force: true }));
    const file = join(dir, 'tokens.json');
    await writeFile(file, JSON.stringify([entry]));
    // API_TOKENS would win over the file: unset here, whatever the test's environment holds.
    const { url, output } = await startApiMain({ API_TOKENS: '', API_TOKENS_FILE: file });
    const res = await fetch(`${url}/v1/sessions/${uniqueId('nobody')}`, { headers: { authorization: `Bearer ${token}` } });
    expect(res.status).toBe(404);
    const me = await fetch(`${url}/v1/me`, { headers: { authorization: `Bearer ${token}` } });
    expect(await me.json()).toMatchObject({ tenant: 'acme', user: 'ana', roles: ['user'] });
    expect(output()).not.toContain(token);
  });

  it('npm run api serves the web console as npm start does: the page at /, its bundle, the Temporal Web UI link; API_CONSOLE_DIR picks the bundle or turns it off', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'console-'));
    closers.push(() => rm(dir, { recursive: true, force: true }));
    const built = await buildConsole({ outDir: dir });
    const { token, entry } = mintToken({ tenant: 'acme', user: 'ana' });
    const { url } = await startApiMain({ API_TOKENS: JSON.stringify([entry]), API_CONSOLE_DIR: built.outDir, TEMPORAL_UI_URL: 'http://temporal-ui.example:8080/' });
    const page = await fetch(`${url}/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    expect(page.headers.get('content-security-policy')).toContain("default-src 'self'");
    const html = await page.text();
    expect(html).toContain('<title>durable-agent console</title>');
    expect(html).toContain('/assets/app.js');
    expect((await fetch(`${url}/assets/app.js`)).status).toBe(200);
    const me = await fetch(`${url}/v1/me`, { headers: { authorization: `Bearer ${token}` } });
    expect(await me.json()).toMatchObject({ tenant: 'acme', user: 'ana', temporalUiUrl: 'http://temporal-ui.example:8080' });
    const off = await startApiMain({ API_TOKENS: JSON.stringify([entry]), API_CONSOLE_DIR: 'off' });
    expect((await fetch(`${off.url}/`)).status).toBe(404);
    // The defaults main takes: the bundle npm install builds, and the local stack's Web UI when Temporal is on this machine.
    expect(consoleSettings({}, '127.0.0.1:7233')).toEqual({ dir: DEFAULT_CONSOLE_DIR, temporalUiUrl: 'http://127.0.0.1:8233' });
    expect(consoleSettings({ TEMPORAL_UI_PORT: '9233' }, 'localhost:7233')).toEqual({ dir: DEFAULT_CONSOLE_DIR, temporalUiUrl: 'http://127.0.0.1:9233' });
    expect(consoleSettings({}, 'temporal.internal:7233')).toEqual({ dir: DEFAULT_CONSOLE_DIR });
    expect(() => consoleSettings({ TEMPORAL_UI_URL: 'javascript:alert(1)' }, '127.0.0.1:7233')).toThrow(/TEMPORAL_UI_URL must be an http\(s\) URL/);
  });
});
