import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import { timingSafeEqual, createHash } from 'node:crypto';
import type { Payload, PayloadCodec } from '@temporalio/common';
import { z } from 'zod';

/**
 * The Temporal Web UI's remote codec protocol: `POST /encode` and
 * `POST /decode` with `{ payloads: [{ metadata: { k: base64 }, data: base64 }] }`
 * (protobuf JSON), answered in the same shape. The UI calls it from the
 * browser, so the server answers CORS preflights for the UI's origin only.
 *
 * Every call needs the token: `Authorization: Bearer <token>` (the UI sends
 * the signed-in user's token when "pass access token" is on), or, for a UI
 * without sign-in such as the dev server's, the token as the first path
 * segment (`http://host:port/<token>/decode`), since that UI cannot add a header.
 */
export interface CodecServerOptions {
  codec: PayloadCodec;
  token: string;
  /** Origins allowed to call from a browser, e.g. the Web UI's `http://127.0.0.1:8233`. */
  allowedOrigins: string[];
  /** Namespaces whose payloads this server handles; others are refused. Default: any. */
  namespaces?: string[];
}

const JsonPayload = z.object({
  metadata: z.record(z.string(), z.string()).optional().nullable(),
  data: z.string().optional().nullable(),
});
const CodecRequest = z.object({ payloads: z.array(JsonPayload).max(10_000) });
type JsonPayload = z.infer<typeof JsonPayload>;

const MAX_BODY_BYTES = 16 * 1024 * 1024;

const fromJson = (p: JsonPayload): Payload => ({
  metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64')])),
  data: Buffer.from(p.data ?? '', 'base64'),
});
const toJson = (p: Payload): { metadata: Record<string, string>; data: string } => ({
  metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v ?? new Uint8Array()).toString('base64')])),
  data: Buffer.from(p.data ?? new Uint8Array()).toString('base64'),
});

const digest = (s: string) => createHash('sha256').update(s).digest();

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new HttpError(413, `body over ${MAX_BODY_BYTES} bytes`));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** The request handler, separate from listening so tests and other servers can mount it. */
export function codecRequestHandler(options: CodecServerOptions): (req: IncomingMessage, res: ServerResponse) => void {
  const expected = digest(options.token);
  const authorized = (candidate: string | undefined) => candidate !== undefined && timingSafeEqual(digest(candidate), expected);
  const send = (res: ServerResponse, status: number, body?: unknown) => {
    if (body === undefined) {
      res.writeHead(status).end();
      return;
    }
    const text = JSON.stringify(body);
    res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) }).end(text);
  };
  /** A path segment as text, or undefined when it is not valid percent-encoding. */
  const segmentText = (segment: string): string | undefined => {
    try {
      return decodeURIComponent(segment);
    } catch {
      return undefined;
    }
  };
  const handle: RequestListener = (req, res) => {
    const origin = req.headers.origin;
    if (origin && options.allowedOrigins.includes(origin)) {
      res.setHeader('Access-Control-Allow-Origin', origin);
      res.setHeader('Access-Control-Allow-Credentials', 'true');
      res.setHeader('Vary', 'Origin');
    }
    if (req.method === 'OPTIONS') {
      if (!origin || !options.allowedOrigins.includes(origin)) return send(res, 403, { error: 'origin not allowed' });
      res.setHeader('Access-Control-Allow-Methods', 'POST, OPTIONS');
      res.setHeader('Access-Control-Allow-Headers', 'Authorization, Content-Type, X-Namespace');
      res.setHeader('Access-Control-Max-Age', '600');
      return send(res, 204);
    }
    const url = new URL(req.url ?? '/', 'http://codec.invalid');
    const segments = url.pathname.split('/').filter(Boolean);
    const action = segments.at(-1);
    const pathToken = segments.length === 2 ? segmentText(segments[0]!) : undefined;
    if (segments.length > 2 || (action !== 'encode' && action !== 'decode')) return send(res, 404, { error: 'POST /encode or /decode' });
    if (req.method !== 'POST') return send(res, 405, { error: 'use POST' });
    const bearer = /^Bearer (.+)$/i.exec(req.headers.authorization ?? '')?.[1];
    if (!authorized(bearer) && !authorized(pathToken)) return send(res, 401, { error: 'a valid bearer token is required' });
    const namespace = req.headers['x-namespace'];
    if (options.namespaces && (typeof namespace !== 'string' || !options.namespaces.includes(namespace))) {
      return send(res, 403, { error: 'namespace not served by this codec server' });
    }
    readBody(req)
      .then(async (text) => {
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          throw new HttpError(400, 'body is not JSON');
        }
        const parsed = CodecRequest.safeParse(json);
        if (!parsed.success) throw new HttpError(400, 'body must be { payloads: [{ metadata, data }] } with base64 values');
        const payloads = parsed.data.payloads.map(fromJson);
        try {
          const out = action === 'encode' ? await options.codec.encode(payloads) : await options.codec.decode(payloads);
          send(res, 200, { payloads: out.map(toJson) });
        } catch (err) {
          // The codec's own message names key ids, never key material.
          throw new HttpError(400, err instanceof Error ? err.message : String(err));
        }
      })
      .catch((err: unknown) => {
        if (res.headersSent) return;
        send(res, err instanceof HttpError ? err.status : 500, { error: err instanceof HttpError ? err.message : 'internal error' });
      });
  };
  // Whatever a request holds, it gets an answer and the server stays up.
  return (req, res) => {
    try {
      handle(req, res);
    } catch {
      if (!res.headersSent) send(res, 400, { error: 'malformed request' });
      else res.destroy();
    }
  };
}

/** Starts the codec server on `port` (0: any free port) of `host`. */
export async function startCodecServer(options: CodecServerOptions & { host?: string; port?: number }): Promise<{ server: Server; url: string; close(): Promise<void> }> {
  const server = createServer(codecRequestHandler(options));
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  return {
    server,
    url: `http://${host}:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
