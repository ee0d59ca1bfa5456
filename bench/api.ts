/**
 * `npm run bench:api`: what the HTTP API adds to a turn, and how it holds
 * many readers of one session.
 *
 * 1. Per-turn latency, side by side in one process: the typed client (send,
 *    then its open event stream up to turn_completed) against the API (POST
 *    the message, then an open SSE stream up to turn_completed), on two
 *    sessions of the same worker and scripted model, alternating who goes
 *    first. Target: at most 5 ms added at the median.
 * 2. Fan-out: `--readers` SSE connections (default 200) on one session
 *    through one API server while a turn streams its text. Target: every
 *    reader gets every event (0 dropped) from one subscription to the workflow.
 *
 *   npm run bench:api -- [--turns 40] [--warmup 5] [--readers 200]
 *
 * The last line printed is one JSON object.
 */
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { mintToken, TokenBook } from '../api/auth';
import { createApi, listen } from '../api/server';
import { readSseEvents, type SseEvent } from '../api/sse-reader';
import { AgentClient, type SessionEvent } from '../client';
import { dataConverterFor } from '../codec/data-converter';
import { ensureStack } from '../scripts/stack';
import { ScriptedModelServer, type ChatRequest } from '../scripted-model';
import { SUMMARIZER_MARKER } from '../activities/summarize-activity';
import { emptySummary } from '../workflows/session-summary';
import { createAgentWorker } from '../workers/agent-worker';
import { loadConfig } from '../workers/config';
import { intOption } from './support/int-option';
import { median, percentile, round } from './support/stats';

const TARGET_ADDED_MS = 5;
const log = (line: string): void => void process.stderr.write(`${line}\n`);

function options() {
  const { values } = parseArgs({ options: { turns: { type: 'string', default: '40' }, warmup: { type: 'string', default: '5' }, readers: { type: 'string', default: '200' } } });
  return {
    turns: intOption('turns', values.turns, 1, 10_000),
    warmup: intOption('warmup', values.warmup, 0, 1_000),
    readers: intOption('readers', values.readers, 1, 5_000),
  };
}

/** Reads an SSE response until the turn's turn_completed. */
async function untilTurnCompleted(events: AsyncGenerator<SseEvent>, turnId: string): Promise<SseEvent[]> {
  const seen: SseEvent[] = [];
  for (;;) {
    const next = await events.next();
    if (next.done) throw new Error(`the event stream ended before ${turnId} completed; its last event: ${JSON.stringify(seen.at(-1) ?? null).slice(0, 300)}`);
    seen.push(next.value);
    if (next.value.event === 'turn_completed' && (JSON.parse(next.value.data) as { turnId: string }).turnId === turnId) return seen;
  }
}

async function main(): Promise<void> {
  const opts = options();
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const stack = await ensureStack({ log: (line) => log(`[stack] ${line}`) });
  const id = randomUUID().slice(0, 8);
  // Forty words, streamed a word at a time: a turn's worth of text deltas for the readers.
  const words = Array.from({ length: 40 }, (_, i) => `word${i}`).join(' ');
  // Summaries (the window folds over 40 turns) get a valid empty one, so no turn waits on a retry.
  const isSummary = (req: ChatRequest) => req.messages.some((m) => m.role === 'system' && typeof m.content === 'string' && m.content.startsWith(SUMMARIZER_MARKER));
  const model = await ScriptedModelServer.start({ fallback: (req) => (isSummary(req) ? { kind: 'json', value: emptySummary() } : { kind: 'text', text: words }) });
  const config = loadConfig({
    ...process.env,
    TEMPORAL_ADDRESS: stack.temporalAddress,
    TEMPORAL_NAMESPACE: stack.temporalNamespace,
    MONGODB_URI: stack.mongoUri,
    TEMPORAL_TASK_QUEUE: `bench-api-${id}`,
    OPENAI_BASE_URL: model.baseUrl,
    OPENAI_API_KEY: 'bench',
    MODEL_NAME: 'bench',
    MAINTENANCE_EVERY_MS: '0',
  });
  const { address, namespace, taskQueue } = config.temporal;
  log('[bench] starting a worker (bundling workflow code takes a few seconds)');
  const worker = await createAgentWorker(config);
  worker.run().catch((err: unknown) => log(`[bench] worker failed: ${String(err)}`));
  const principal = { tenant: 'bench', user: 'api' };
  const agent = await AgentClient.connect({ address, namespace, taskQueue, dataConverter: dataConverterFor(config.encryption), principal });
  const { token, entry } = mintToken(principal);
  const { app, hub } = createApi({ agent, tokens: new TokenBook([entry]), limits: { streamsPerPrincipal: opts.readers + 10, requestsPerMinute: 1_000_000 } });
  const server = await listen(app, 0);
  const auth = { authorization: `Bearer ${token}` };
  const controllers: AbortController[] = [];
  try {
    // Two sessions, one per path, each with its event stream open for the whole run.
    const typedSession = `bench-api-typed-${id}`;
    const httpSession = `bench-api-http-${id}`;
    const typedOptions = { sessionId: typedSession, namespace: principal, memory: { enabled: false } };
    await agent.ask(typedOptions, { text: 'start' });
    const startHttp = await fetch(`${server.url}/v1/sessions/${httpSession}/messages`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'start', options: { memory: { enabled: false } }, waitForTurn: true }),
    });
    if (startHttp.status !== 200) throw new Error(`starting the HTTP session: ${startHttp.status} ${await startHttp.text()}`);
    // From the start: each turn reads on to its own turn_completed, so what came before is read once, during warm-up.
    const typedEvents: AsyncGenerator<SessionEvent> = agent.events(typedSession, { fromOffset: 0 });
    const sseControl = new AbortController();
    controllers.push(sseControl);
    const sse = await fetch(`${server.url}/v1/sessions/${httpSession}/events`, { headers: auth, signal: sseControl.signal });
    const httpEvents = readSseEvents(sse.body!);

    const typedTurn = async (text: string): Promise<number> => {
      const t0 = performance.now();
      const { turnId } = await agent.send(typedOptions, { text });
      for (;;) {
        const next = await typedEvents.next();
        if (next.done) throw new Error('the typed event stream ended');
        if (next.value.event.type === 'turn_completed' && next.value.event.turnId === turnId) return performance.now() - t0;
      }
    };
    const httpTurn = async (text: string): Promise<number> => {
      const t0 = performance.now();
      const res = await fetch(`${server.url}/v1/sessions/${httpSession}/messages`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ text }) });
      if (res.status !== 202) throw new Error(`POST message: ${res.status} ${await res.text()}`);
      const { turnId } = (await res.json()) as { turnId: string };
      await untilTurnCompleted(httpEvents, turnId);
      return performance.now() - t0;
    };

    log(`[bench] warming up: ${opts.warmup} turn(s) each`);
    for (let i = 0; i < opts.warmup; i++) {
      await typedTurn(`warm-up ${i}`);
      await httpTurn(`warm-up ${i}`);
    }
    log(`[bench] measuring ${opts.turns} turn(s) each, alternating`);
    const typedMs: number[] = [];
    const httpMs: number[] = [];
    for (let i = 0; i < opts.turns; i++) {
      if (i % 2 === 0) {
        typedMs.push(await typedTurn(`turn ${i}`));
        httpMs.push(await httpTurn(`turn ${i}`));
      } else {
        httpMs.push(await httpTurn(`turn ${i}`));
        typedMs.push(await typedTurn(`turn ${i}`));
      }
    }
    const added = httpMs.map((ms, i) => ms - (typedMs[i] as number));
    sseControl.abort();
    await typedEvents.return(undefined);

    // Fan-out: many readers of one session, one subscription.
    const fanSession = `bench-api-fan-${id}`;
    await fetch(`${server.url}/v1/sessions/${fanSession}/messages`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'start', options: { memory: { enabled: false } }, waitForTurn: true }),
    });
    const fanOffset = 0;
    const subscriptionsBefore = hub.subscriptionsOpened;
    log(`[bench] opening ${opts.readers} SSE readers on one session`);
    const readers = await Promise.all(
      Array.from({ length: opts.readers }, async () => {
        const c = new AbortController();
        controllers.push(c);
        const res = await fetch(`${server.url}/v1/sessions/${fanSession}/events?from=${fanOffset}`, { headers: auth, signal: c.signal });
        if (res.status !== 200) throw new Error(`reader refused: ${res.status}`);
        return readSseEvents(res.body!);
      }),
    );
    const t0 = performance.now();
    const posted = await fetch(`${server.url}/v1/sessions/${fanSession}/messages`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ text: 'fan out' }) });
    const { turnId } = (await posted.json()) as { turnId: string };
    const received = await Promise.all(readers.map((r) => untilTurnCompleted(r, turnId)));
    const fanMs = performance.now() - t0;
    const reference = await collectOffsets(agent, fanSession, fanOffset, turnId);
    const dropped = received.reduce((sum, got) => {
      const ids = new Set(got.map((e) => Number(e.id)));
      return sum + reference.filter((o) => !ids.has(o)).length;
    }, 0);
    const subscriptions = hub.subscriptionsOpened - subscriptionsBefore;

    const result = {
      bench: 'api',
      turns: opts.turns,
      typed_median_ms: round(median(typedMs)),
      api_median_ms: round(median(httpMs)),
      api_added_ms_median: round(median(added)),
      api_added_ms_p95: round(percentile(added, 95)),
      target_added_ms: TARGET_ADDED_MS,
      sse_readers: opts.readers,
      events_per_reader: reference.length,
      dropped_events: dropped,
      workflow_subscriptions: subscriptions,
      fan_out_turn_ms: round(fanMs),
      met: median(added) <= TARGET_ADDED_MS && dropped === 0 && subscriptions === 1,
    };
    log('');
    log(`per turn, median: typed client ${result.typed_median_ms} ms, HTTP + SSE ${result.api_median_ms} ms, added ${result.api_added_ms_median} ms (p95 ${result.api_added_ms_p95}); target <= ${TARGET_ADDED_MS} ms`);
    log(`${opts.readers} SSE readers on one session: ${reference.length} events each, ${dropped} dropped, ${subscriptions} subscription(s) to the workflow, turn delivered to all in ${result.fan_out_turn_ms} ms`);
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } finally {
    for (const c of controllers) c.abort();
    await server.close();
    hub.close();
    await worker.shutdown().catch(() => undefined);
    await agent.client.connection.close().catch(() => undefined);
    await model.close();
  }
}

/** The offsets of one turn's events, read by the typed client: what every reader must have got. */
async function collectOffsets(agent: AgentClient, sessionId: string, fromOffset: number, turnId: string): Promise<number[]> {
  const out: number[] = [];
  for await (const { offset, event } of agent.events(sessionId, { fromOffset })) {
    out.push(offset);
    if (event.type === 'turn_completed' && event.turnId === turnId) break;
  }
  return out;
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    log(`bench:api failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    process.exit(1);
  },
);
