import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';

/**
 * The most one answer of an MCP server may hold, in bytes. On stdio, the
 * SDK's own bound (10 MB) closed the server's shared connection when one
 * result passed it: a 4 MB photo from server-filesystem's `read_media_file`
 * (its base64 sent twice) failed every call in flight on that server, from
 * every session, as "connection lost", and a retry did it again. Over HTTP
 * nothing bounded an answer. A result is cut for the model far below this
 * (`MAX_TOOL_RESULT_CHARS`); this only keeps one answer from taking the
 * worker's memory or the connection.
 */
export const MAX_MCP_MESSAGE_BYTES = 64 * 1024 * 1024;

/** An answer of an MCP server larger than MAX_MCP_MESSAGE_BYTES: the call is failed, not retried. */
export class McpAnswerTooLargeError extends Error {
  constructor(readonly limitBytes: number) {
    super(`the server's answer is larger than ${Math.round(limitBytes / (1024 * 1024))} MB`);
    this.name = 'McpAnswerTooLargeError';
  }
}

/** Statuses whose answer has no body (a Response with one cannot be made). */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

/**
 * A fetch for the streamable HTTP transport whose JSON answers to POSTs fail
 * once they pass `limitBytes`: the SDK's read of the answer rejects, and so
 * does the call. An answer streamed as server-sent events is not bounded
 * here: the SDK catches an error in that stream and only reports a
 * disconnect, so the call would hang until its timeout (or, from a
 * resumable server, be read again whole over GET). The long-lived GET
 * stream of notifications is not counted either.
 */
export function boundedFetch(limitBytes = MAX_MCP_MESSAGE_BYTES, inner: FetchLike = fetch): FetchLike {
  return async (url, init) => {
    const response = await inner(url, init);
    if ((init?.method ?? 'GET').toUpperCase() !== 'POST' || !response.body || NULL_BODY_STATUSES.has(response.status)) return response;
    if (!(response.headers.get('content-type') ?? '').toLowerCase().includes('application/json')) return response;
    let seen = 0;
    const counted = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          seen += chunk.byteLength;
          if (seen > limitBytes) controller.error(new McpAnswerTooLargeError(limitBytes));
          else controller.enqueue(chunk);
        },
      }),
    );
    const bounded = new Response(counted, { status: response.status, statusText: response.statusText, headers: response.headers });
    // What a Response made here cannot be given: where the answer came from.
    Object.defineProperties(bounded, { url: { value: response.url }, redirected: { value: response.redirected } });
    return bounded;
  };
}
