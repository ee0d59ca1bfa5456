import type { Readable } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
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
  /** Closes the agent's idle connections; requests still running are let finish. */
  close(): Promise<void>;
}

/** Statuses whose response has no body (a `Response` refuses one). */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

export function createModelFetch(options: { connectTimeoutMs?: number } = {}): ModelFetch {
  const agent = new Agent({ keepAliveTimeout: 30_000, connect: { timeout: options.connectTimeoutMs ?? 10_000 } });
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
    if (NULL_BODY_STATUSES.has(res.statusCode)) {
      res.body.resume();
      return new Response(null, { status: res.statusCode, headers });
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
    close: () => agent.close(),
  };
}

function headerPairs(headers: ConstructorParameters<typeof Headers>[0]): Record<string, string> {
  const out: Record<string, string> = {};
  if (!headers) return out;
  // Headers, arrays of pairs and records alike; a name given twice is joined as fetch would.
  const entries = headers instanceof Headers || Array.isArray(headers) ? headers : Object.entries(headers);
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
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        body.on('data', (chunk: Buffer) => {
          controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
          if ((controller.desiredSize ?? 0) <= 0) body.pause();
        });
        body.once('end', () => controller.close());
        body.once('error', (err) => {
          if (signal?.aborted) controller.error(signal.reason);
          else controller.error(new TypeError('terminated', { cause: err }));
        });
      },
      pull() {
        body.resume();
      },
      cancel(reason) {
        body.destroy(reason instanceof Error ? reason : undefined);
      },
    },
    { highWaterMark: 16 * 1024, size: (chunk) => chunk.byteLength },
  );
}

function decode(body: Readable, encoding: string | null): Readable {
  switch (encoding?.trim().toLowerCase()) {
    case 'gzip':
    case 'x-gzip':
      return body.pipe(createGunzip());
    case 'deflate':
      return body.pipe(createInflate());
    case 'br':
      return body.pipe(createBrotliDecompress());
    default:
      return body;
  }
}
