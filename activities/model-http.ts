import { pipeline, type Readable, type Transform } from 'node:stream';
import { constants as zlib, createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { Agent, type Dispatcher } from 'undici';

/*
 * The HTTP under the openai SDK's model requests. The SDK takes any `fetch`;
 * Node's own (undici's `fetch`, built in) spends about a millisecond of CPU a
 * request on its WHATWG machinery (request and response objects, web
 * streams both ways, abort signals chained per request) before and after
 * the bytes: as much as the rest of a step's work in the worker when the
 * model answers at once (docs/performance.md, "The model's HTTP"). This
 * `fetch` sends through undici's lower-level `request` on a keep-alive
 * agent of its own and hands the SDK a real `Response`, so the SDK's
 * parsing, streaming and errors are the ones it was written for.
 *
 * What it does not do that the built-in fetch does: follow redirects (a
 * model API that redirects a POST is misconfigured; the SDK reports the
 * status), cookies, caching. Compressed answers are decompressed.
 */

export interface ModelFetch {
  fetch: typeof fetch;
  /**
   * Closes the agent's connections: requests still running are let finish
   * for up to `graceMs` (default 2 s), then their sockets are destroyed.
   * Calling it again returns the same promise.
   */
  close(graceMs?: number): Promise<void>;
}

/** Statuses whose response has no body (a `Response` refuses one); undici answers no 1xx. */
const NULL_BODY_STATUSES = new Set([204, 205, 304]);

export function createModelFetch(options: { connectTimeoutMs?: number } = {}): ModelFetch {
  // undici's keep-alive default (4 s unless the server says otherwise), as under Node's fetch: a server that drops idle
  // connections after 5 s without saying so must not get a request on one it is closing.
  const agent = new Agent({ connect: { timeout: options.connectTimeoutMs ?? 10_000 } });
  let closing: Promise<void> | undefined;
  const send = async (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    if (typeof input !== 'string' && !(input instanceof URL)) {
      // The SDK always passes a URL and options; anything else goes the standard way.
      return fetch(input, init);
    }
    const url = typeof input === 'string' ? new URL(input) : input;
    const body = init.body;
    if (body !== undefined && body !== null && typeof body !== 'string' && !(body instanceof Uint8Array)) {
      // Only the SDK's JSON and its file uploads reach here; streamed or form bodies take the standard path.
      return fetch(input, init);
    }
    const res = await agent.request({
      origin: url.origin,
      path: `${url.pathname}${url.search}`,
      method: (init.method ?? 'GET') as Dispatcher.HttpMethod,
      headers: headerPairs(init.headers),
      body: body ?? null,
      ...(init.signal ? { signal: init.signal } : {}),
    });
    const headers = new Headers();
    for (const [name, value] of Object.entries(res.headers)) {
      if (value === undefined) continue;
      if (Array.isArray(value)) for (const v of value) headers.append(name, v);
      else headers.append(name, value);
    }
    if (NULL_BODY_STATUSES.has(res.statusCode) || init.method?.toUpperCase() === 'HEAD') {
      res.body.resume();
      const empty = new Response(null, { status: res.statusCode, headers });
      Object.defineProperty(empty, 'url', { value: url.href });
      return empty;
    }
    const decoded = decode(res.body, headers.get('content-encoding'));
    if (decoded !== res.body) {
      // The length and encoding describe the bytes on the wire, not what the SDK reads.
      headers.delete('content-encoding');
      headers.delete('content-length');
    }
    const response = new Response(webBody(decoded, init.signal), { status: res.statusCode, headers });
    Object.defineProperty(response, 'url', { value: url.href });
    return response;
  };
  return {
    fetch: send as typeof fetch,
    close(graceMs = 2_000) {
      closing ??= (async () => {
        // A body nobody reads or cancels keeps its request running, and the agent's close() would wait for it for ever.
        let timer: NodeJS.Timeout | undefined;
        const closed = await Promise.race([
          agent.close().then(
            () => true,
            () => true,
          ),
          new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), graceMs))),
        ]);
        clearTimeout(timer);
        if (!closed) await agent.destroy().catch(() => undefined);
      })();
      return closing;
    },
  };
}

function headerPairs(headers: ConstructorParameters<typeof Headers>[0]): Record<string, string> {
  const out: Record<string, string> = {};
  if (!headers) return out;
  // Headers (of any realm or library: anything iterable), arrays of pairs and records alike; a name given twice is
  // joined as fetch would. A Headers from elsewhere read as a record would lose every header, the key's among them.
  const iterable = typeof (headers as { [Symbol.iterator]?: unknown })[Symbol.iterator] === 'function';
  const entries = iterable ? headers : Object.entries(headers);
  for (const [name, value] of entries as Iterable<[string, string]>) {
    const key = name.toLowerCase();
    out[key] = key in out ? `${out[key]}, ${value}` : String(value);
  }
  return out;
}

/**
 * The body as the web stream a `Response` reads, failing the way fetch's
 * does: a read after an abort rejects with the abort's reason, and a body
 * cut short (the server closed, a reset) with `TypeError: terminated`, the
 * socket's error as its cause.
 */
function webBody(body: Readable, signal: AbortSignal | null | undefined): ReadableStream<Uint8Array> {
  // Once the stream is closed, errored or cancelled, nothing more goes to its controller: a `resume()` from a pull
  // just before a cancel still emits what the body had buffered, and an enqueue then would throw outside any caller
  // (an uncaught exception: the worker would exit).
  let done = false;
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        body.on('data', (chunk: Buffer) => {
          if (done) return;
          controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
          if ((controller.desiredSize ?? 0) <= 0) body.pause();
        });
        body.once('end', () => {
          if (done) return;
          done = true;
          controller.close();
        });
        body.on('error', (err) => {
          if (done) return;
          done = true;
          controller.error(signal?.aborted ? signal.reason : new TypeError('terminated', { cause: err }));
        });
      },
      pull() {
        body.resume();
      },
      cancel(reason) {
        done = true;
        body.destroy(reason instanceof Error ? reason : undefined);
      },
    },
    { highWaterMark: 16 * 1024, size: (chunk) => chunk.byteLength },
  );
}

/**
 * The body decompressed, as leniently as fetch does (a stream that stops
 * without its trailer gives what it has). `pipeline`, not `pipe`: an abort,
 * a reset or a cancel on either side reaches the other, so a read fails
 * instead of waiting for ever and the socket is let go.
 */
function decode(body: Readable, encoding: string | null): Readable {
  const lenient = { flush: zlib.Z_SYNC_FLUSH, finishFlush: zlib.Z_SYNC_FLUSH };
  let decoder: Transform;
  switch (encoding?.trim().toLowerCase()) {
    case 'gzip':
    case 'x-gzip':
      decoder = createGunzip(lenient);
      break;
    case 'deflate':
      decoder = createInflate(lenient);
      break;
    case 'br':
      decoder = createBrotliDecompress({ flush: zlib.BROTLI_OPERATION_FLUSH, finishFlush: zlib.BROTLI_OPERATION_FLUSH });
      break;
    default:
      return body;
  }
  return pipeline(body, decoder, () => undefined);
}
