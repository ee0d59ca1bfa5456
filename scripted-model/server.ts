import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { ChatRequest } from './chat-request';
import { replyToChat } from './chat-completions';
import { EmbeddingRequest, embeddingResponseBody, type Embedder } from './embeddings';
import { BodyTooLargeError, headerValue, readBody, sendJson } from './http-io';
import { describeInvalidBody, describeIssues } from './invalid-body';
import { findSequenceProblem } from './message-sequence';
import { pauseUnlessClosed } from './sse';
import { offlineEmbedding } from './offline-embedding';
import { sendInvalidRequest, sendNotFound, sendOpenAiError, sendUnexpected } from './openai-errors';
import { pickResponse } from './pick-response';
import { RequestLog, type WaitOptions } from './request-log';
import { DEFAULT_LANE, LANE_HEADER, type RecordedRequest, ScriptedStep, type StepResponse } from './scenario';
import { StepQueues } from './step-queue';

export interface ScriptedModelServerOptions {
  /** Default 0: the OS picks a free port. */
  port?: number;
  /** Default 127.0.0.1; the server is meant for loopback only. */
  host?: string;
  /** Answers requests no step expects, instead of failing them. */
  fallback?: (req: ChatRequest) => StepResponse;
  /** Replaces the offline embedder for `/v1/embeddings`. */
  embed?: (text: string) => number[];
  /** One line per request on stderr. */
  log?: boolean;
  /**
   * Milliseconds every chat request waits before its answer starts, as a real
   * model spends on its prompt before the first token (default 0). The
   * request's step is taken before the wait: a client that hangs up meanwhile
   * gets nothing and is recorded as aborted, and the step is spent, as with
   * `hang`.
   */
  latencyMs?: number;
}

const BODY_LIMIT_BYTES = 16 * 1024 * 1024;
/** The longest wait a timer can hold (a longer one fires at once). */
const MAX_LATENCY_MS = 2 ** 31 - 1;

/**
 * An OpenAI-compatible model server driven by scripts, for tests, benchmarks
 * and the demo. It speaks real HTTP so the real `openai` SDK, its retries,
 * streaming parser and abort handling are all part of what a test exercises.
 */
export class ScriptedModelServer {
  /** Give this to the `openai` SDK as `baseURL`. */
  readonly baseUrl: string;
  private readonly log = new RequestLog();
  private readonly queues = new StepQueues();
  private readonly toolCallCounters = new Map<string, number>();
  private readonly sockets = new Set<Socket>();
  private nextRequestId = 0;
  private nextCompletionId = 0;
  private closing: Promise<void> | undefined;

  private constructor(
    private readonly http: Server,
    address: AddressInfo,
    private readonly options: ScriptedModelServerOptions,
  ) {
    const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    this.baseUrl = `http://${host}:${address.port}/v1`;
  }

  static async start(options: ScriptedModelServerOptions = {}): Promise<ScriptedModelServer> {
    const latency = options.latencyMs;
    if (latency !== undefined && !(Number.isFinite(latency) && latency >= 0 && latency <= MAX_LATENCY_MS)) {
      throw new Error(`latencyMs must be a number of milliseconds from 0 to ${MAX_LATENCY_MS}, got ${String(latency)}`);
    }
    const http = createServer();
    await new Promise<void>((resolve, reject) => {
      http.once('error', reject);
      http.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
        http.off('error', reject);
        resolve();
      });
    });
    const server = new ScriptedModelServer(http, http.address() as AddressInfo, options);
    http.on('connection', (socket) => {
      server.sockets.add(socket);
      socket.on('close', () => server.sockets.delete(socket));
    });
    http.on('request', (req, res) => void server.handle(req, res));
    return server;
  }

  /** Every request in arrival order, across lanes. Cleared in place by `reset()`. */
  get requests(): RecordedRequest[] {
    return this.log.all;
  }

  /** Appends steps to a lane's queue (default lane `default`). Throws at once on a malformed step. */
  script(steps: ScriptedStep[], options: { lane?: string } = {}): void {
    const parsed = ScriptedStep.array().safeParse(steps);
    if (!parsed.success) {
      throw new Error(`scripted model: invalid script: ${describeIssues(parsed.error)}`);
    }
    this.queues.append(options.lane ?? DEFAULT_LANE, parsed.data);
  }

  requestsFor(lane: string): RecordedRequest[] {
    return this.log.forLane(lane);
  }

  /** Throws listing every unconsumed step and unexpected request, for one lane or all of them. */
  assertDone(lane?: string): void {
    const unconsumed = this.queues.pending(lane).map((step) => {
      const uses = step.remaining > 1 ? ` (${step.remaining} uses left)` : '';
      return `unconsumed ${step.description} on lane "${step.lane}"${uses}`;
    });
    const unexpected = (lane === undefined ? this.log.all : this.log.forLane(lane)).flatMap((record) =>
      record.unexpected === undefined
        ? []
        : [`unexpected request #${record.id} ${record.path} on lane "${record.lane}": ${record.unexpected}`],
    );
    const problems = [...unconsumed, ...unexpected];
    if (problems.length === 0) return;
    const scope = lane === undefined ? '' : ` on lane "${lane}"`;
    throw new Error(`scripted model: scenario not done${scope}:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }

  waitForRequests(count: number, options: WaitOptions & { lane?: string } = {}): Promise<void> {
    const { lane } = options;
    const seen = (): number => (lane === undefined ? this.log.all.length : this.log.forLane(lane).length);
    return this.log.waitUntil(
      () => seen() >= count,
      () => `${count} request(s)${lane === undefined ? '' : ` on lane "${lane}"`}, saw ${seen()}`,
      options,
    );
  }

  /** Resolves once `predicate` holds over the records, e.g. once a hanging request is seen aborted. */
  waitUntil(predicate: (requests: readonly RecordedRequest[]) => boolean, options: WaitOptions = {}): Promise<void> {
    return this.log.waitUntil(predicate, () => `a condition over ${this.log.all.length} recorded request(s)`, options);
  }

  /** Clears step queues, records and tool-call id counters. Open connections stay open. */
  reset(): void {
    this.queues.clear();
    this.log.clear();
    this.toolCallCounters.clear();
    this.nextRequestId = 0;
  }

  /** Stops listening and destroys every open connection, hanging ones included. */
  close(): Promise<void> {
    this.closing ??= new Promise<void>((resolve) => {
      this.http.close(() => resolve());
      for (const socket of this.sockets) socket.destroy();
    });
    return this.closing;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const lane = headerValue(req, LANE_HEADER)?.trim() || DEFAULT_LANE;
    const record: RecordedRequest = {
      id: ++this.nextRequestId,
      path: (req.url ?? '/').split('?')[0] ?? '/',
      lane,
      body: undefined,
      stream: false,
      receivedAt: Date.now(),
      aborted: false,
    };
    const closed = new AbortController();
    let serverCut = false;
    res.on('close', () => {
      closed.abort();
      record.finishedAt ??= Date.now();
      // A close before the response completed is the client walking away,
      // unless we cut the connection ourselves (a fault or shutdown).
      if (!res.writableFinished && !serverCut && this.closing === undefined) record.aborted = true;
      this.log.changed();
    });

    let text: string;
    try {
      text = await readBody(req, BODY_LIMIT_BYTES);
    } catch (error) {
      this.log.add(record);
      // Any other read failure is the client going away mid-upload; the
      // close handler records that as an abort, which is not a script error.
      if (error instanceof BodyTooLargeError) {
        this.refuse(record, error.message);
        sendOpenAiError(res, 413, { message: error.message, type: 'invalid_request_error', param: null, code: null });
      }
      return;
    }
    // Recorded only once the body is in, so a test woken by `waitForRequests` can read it.
    let body: unknown;
    try {
      body = text === '' ? undefined : JSON.parse(text);
    } catch {
      record.body = text;
      this.log.add(record);
      this.refuse(record, 'body is not valid JSON');
      sendInvalidRequest(res, 'We could not parse the JSON body of your request.', null);
      return;
    }
    record.body = body;
    record.stream = typeof body === 'object' && body !== null && 'stream' in body && body.stream === true;
    this.log.add(record);

    try {
      if (req.method === 'POST' && record.path === '/v1/chat/completions') {
        await this.chat(record, body, res, closed.signal, () => {
          serverCut = true;
        });
      } else if (req.method === 'POST' && record.path === '/v1/embeddings') {
        this.embeddings(record, body, res);
      } else {
        const message = `scripted model: unexpected request ${req.method ?? '?'} ${record.path}: no such endpoint`;
        this.refuse(record, message);
        sendNotFound(res, message);
      }
    } catch (error) {
      // A bug in the scripted model itself must still fail the test loudly.
      const message = `scripted model: internal error: ${error instanceof Error ? error.message : String(error)}`;
      if (record.unexpected === undefined) this.refuse(record, message);
      if (!res.headersSent) sendUnexpected(res, message);
      else res.destroy();
    }
  }

  private async chat(
    record: RecordedRequest,
    body: unknown,
    res: ServerResponse,
    closed: AbortSignal,
    onServerCut: () => void,
  ): Promise<void> {
    const parsed = ChatRequest.safeParse(body);
    if (!parsed.success) {
      const invalid = describeInvalidBody(parsed.error);
      this.refuse(record, invalid.message);
      sendInvalidRequest(res, invalid.message, invalid.param);
      return;
    }
    const request = parsed.data;
    const sequence = findSequenceProblem(request);
    if (sequence !== undefined) {
      this.refuse(record, `Invalid request body: ${sequence.message}`);
      sendInvalidRequest(res, `Invalid request body: ${sequence.message}`, sequence.param);
      return;
    }

    const answer = pickResponse(this.queues, record, request, this.options.fallback);
    if ('unexpected' in answer) {
      this.refuse(record, answer.unexpected);
      sendUnexpected(res, answer.unexpected);
      return;
    }
    this.trace(record, answer.kind);
    const latencyMs = this.options.latencyMs ?? 0;
    if (latencyMs > 0 && !(await pauseUnlessClosed(latencyMs, closed))) return;
    await replyToChat({
      request,
      response: answer,
      res,
      closed,
      identity: {
        id: `chatcmpl-scripted-${++this.nextCompletionId}`,
        created: Math.floor(record.receivedAt / 1000),
        model: request.model,
      },
      nextToolCallId: () => this.nextToolCallId(record.lane),
      onServerCut,
    });
  }

  private embeddings(record: RecordedRequest, body: unknown, res: ServerResponse): void {
    const parsed = EmbeddingRequest.safeParse(body);
    if (!parsed.success) {
      const invalid = describeInvalidBody(parsed.error);
      this.refuse(record, invalid.message);
      sendInvalidRequest(res, invalid.message, invalid.param);
      return;
    }
    const custom = this.options.embed;
    const embed: Embedder = custom === undefined ? offlineEmbedding : (text) => custom(text);
    this.trace(record, 'embeddings');
    sendJson(res, 200, embeddingResponseBody(parsed.data, embed));
  }

  /** Marks a request that will be answered with an error, so `assertDone` fails. */
  private refuse(record: RecordedRequest, reason: string): void {
    record.unexpected = reason;
    this.log.changed();
    this.trace(record, 'UNEXPECTED');
  }

  private nextToolCallId(lane: string): string {
    const n = (this.toolCallCounters.get(lane) ?? 0) + 1;
    this.toolCallCounters.set(lane, n);
    return `call_${lane}_${n}`;
  }

  private trace(record: RecordedRequest, outcome: string): void {
    if (this.options.log !== true) return;
    const detail = record.unexpected === undefined ? (record.stepName ?? '') : record.unexpected;
    process.stderr.write(`[scripted-model] #${record.id} ${record.lane} ${record.path} -> ${outcome} ${detail}\n`);
  }
}
