import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, McpError, type JSONRPCErrorResponse, type RequestId } from '@modelcontextprotocol/sdk/types.js';

/**
 * The most one answer of an MCP server may hold, in bytes. On stdio, the
 * SDK's own bound (10 MB) closed the server's shared connection when one
 * result passed it: a 4 MB photo from server-filesystem's `read_media_file`
 * (its base64 sent twice) failed every call in flight on that server, from
 * every session, as "connection lost", and a retry did it again. Over HTTP
 * nothing bounded an answer, whole or streamed as server-sent events. A
 * result is cut for the model far below this (`MAX_TOOL_RESULT_CHARS`); this
 * only keeps one answer from taking the worker's memory or the connection.
 */
export const MAX_MCP_MESSAGE_BYTES = 64 * 1024 * 1024;

/** An answer of an MCP server larger than MAX_MCP_MESSAGE_BYTES: the call is failed, not retried. */
export class McpAnswerTooLargeError extends Error {
  constructor(readonly limitBytes: number) {
    super(`the server's answer is larger than ${limitBytes >= 1024 * 1024 ? `${Math.round(limitBytes / (1024 * 1024))} MB` : `${limitBytes} bytes`}`);
    this.name = 'McpAnswerTooLargeError';
  }
}

/** Statuses whose answer has no body (a Response with one cannot be made). */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

/**
 * Marks the JSON-RPC error this client hands the SDK for a request whose
 * answer, streamed as server-sent events, passed the bound (its value is the
 * bound in bytes). A server sending it itself gains nothing: it is read as
 * the same failure.
 */
const TOO_LARGE_MARK = 'durableAgentAnswerTooLarge';

/** The error answer given in place of one that passed `limitBytes`. */
export function answerTooLargeResponse(id: RequestId, limitBytes: number): JSONRPCErrorResponse {
  return { jsonrpc: '2.0', id, error: { code: ErrorCode.InternalError, message: new McpAnswerTooLargeError(limitBytes).message, data: { [TOO_LARGE_MARK]: limitBytes } } };
}

/** Whether `err` is the SDK's error for an `answerTooLargeResponse`. */
export function isAnswerTooLarge(err: unknown): boolean {
  if (!(err instanceof McpError) || typeof err.data !== 'object' || err.data === null) return false;
  return typeof (err.data as Record<string, unknown>)[TOO_LARGE_MARK] === 'number';
}

/** The ids of the requests a POST's JSON-RPC body carries (one message or a batch); none when it is not JSON. */
function requestIdsOf(body: unknown): RequestId[] {
  if (typeof body !== 'string') return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return [];
  }
  const ids: RequestId[] = [];
  for (const m of Array.isArray(parsed) ? parsed : [parsed]) {
    if (typeof m !== 'object' || m === null || typeof (m as { method?: unknown }).method !== 'string') continue;
    const id = (m as { id?: unknown }).id;
    if (typeof id === 'string' || typeof id === 'number') ids.push(id);
  }
  return ids;
}

/**
 * Counts the bytes of the event being read from a stream of server-sent
 * events (a blank line ends one; its line breaks are not counted). Line
 * breaks are single bytes in UTF-8 that no other character holds, so the
 * bytes need no decoding.
 */
class EventBytes {
  private line = 0;
  private event = 0;
  private afterCarriageReturn = false;

  constructor(private readonly limitBytes: number) {}

  /** False once the event being read holds more than the bound. */
  add(chunk: Uint8Array): boolean {
    for (let i = 0; i < chunk.length; i++) {
      const byte = chunk[i]!;
      if (byte === 0x0a && this.afterCarriageReturn) {
        this.afterCarriageReturn = false;
        continue;
      }
      this.afterCarriageReturn = byte === 0x0d;
      if (byte === 0x0a || byte === 0x0d) {
        if (this.line === 0) this.event = 0;
        this.line = 0;
      } else {
        this.line += 1;
        this.event += 1;
        if (this.event > this.limitBytes) return false;
      }
    }
    return true;
  }
}

/** `response` with its body read through `counted`, keeping what a Response made here cannot be given. */
function withBody(response: Response, counted: ReadableStream<Uint8Array>): Response {
  const bounded = new Response(counted, { status: response.status, statusText: response.statusText, headers: response.headers });
  // What a Response made here cannot be given: where the answer came from.
  Object.defineProperties(bounded, { url: { value: response.url }, redirected: { value: response.redirected } });
  return bounded;
}

/**
 * A fetch for the streamable HTTP transport that bounds what one answer of
 * the server may hold:
 * - a JSON answer to a POST fails its read once it passes `limitBytes`: the
 *   SDK's read of the answer rejects, and so does the call;
 * - in a stream of server-sent events (the answer to a POST, or the
 *   long-lived GET stream of notifications), one event may hold at most
 *   `limitBytes`. The SDK only reports an error inside such a stream as a
 *   disconnect, and the call would wait for its timeout: so for an answer to
 *   a POST, `onStreamTooLarge` is first given the ids of the requests it
 *   answers, for the transport to fail them (answerTooLargeResponse). A
 *   resumable server's answer read again over GET is cut the same way.
 */
export function boundedFetch(limitBytes = MAX_MCP_MESSAGE_BYTES, inner: FetchLike = fetch, onStreamTooLarge?: (requestIds: RequestId[]) => void): FetchLike {
  return async (url, init) => {
    const response = await inner(url, init);
    if (!response.body || NULL_BODY_STATUSES.has(response.status)) return response;
    const post = (init?.method ?? 'GET').toUpperCase() === 'POST';
    const type = (response.headers.get('content-type') ?? '').toLowerCase();
    if (type.includes('text/event-stream')) {
      const events = new EventBytes(limitBytes);
      let failed = false;
      return withBody(
        response,
        response.body.pipeThrough(
          new TransformStream<Uint8Array, Uint8Array>({
            transform(chunk, controller) {
              if (failed) return;
              if (events.add(chunk)) return controller.enqueue(chunk);
              failed = true;
              if (post) onStreamTooLarge?.(requestIdsOf(init?.body));
              controller.error(new McpAnswerTooLargeError(limitBytes));
            },
          }),
        ),
      );
    }
    if (!post || !type.includes('application/json')) return response;
    let seen = 0;
    return withBody(
      response,
      response.body.pipeThrough(
        new TransformStream<Uint8Array, Uint8Array>({
          transform(chunk, controller) {
            seen += chunk.byteLength;
            if (seen > limitBytes) controller.error(new McpAnswerTooLargeError(limitBytes));
            else controller.enqueue(chunk);
          },
        }),
      ),
    );
  };
}
