import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { brotliCompressSync, constants as zlibConstants, createGzip, deflateSync, gzipSync } from 'node:zlib';
import OpenAI from 'openai';
import { Headers as UndiciHeaders } from 'undici';
import { createModelFetch, type ModelFetch } from '../../activities/model-http';
import { classifyModelError } from '../../activities/model-errors';

/*
 * The fetch the worker hands the openai SDK (MODEL_HTTP_CLIENT=undici). The
 * SDK's own behaviour over it (streams, errors, aborts, retries, embeddings)
 * is checked by test/scripted-model.test.ts, which runs under both fetches;
 * here, what a real server may do that the scripted model does not.
 */

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
  socket: number;
}

let server: Server;
let base: string;
let answer: (req: IncomingMessage, res: ServerResponse, body: string) => void;
const seen: Seen[] = [];
const sockets = new Map<object, number>();
let modelHttp: ModelFetch;

const completion = (text: string): object => ({
  id: 'c1',
  object: 'chat.completion',
  created: 1,
  model: 'm',
  choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
});

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (!sockets.has(req.socket)) sockets.set(req.socket, sockets.size + 1);
      const body = Buffer.concat(chunks).toString('utf8');
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body, socket: sockets.get(req.socket) ?? 0 });
      answer(req, res, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

beforeEach(() => {
  seen.length = 0;
  modelHttp = createModelFetch();
});

afterEach(async () => {
  await modelHttp.close();
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

function sdk(): OpenAI {
  return new OpenAI({ baseURL: `${base}/v1`, apiKey: 'sk-test-key', maxRetries: 0, fetch: modelHttp.fetch });
}

test('the SDK\'s request arrives whole, and later ones reuse its connection', async () => {
  answer = (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(completion('hello')));
  };
  const client = sdk();
  const first = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hé 日本' }] }, { headers: { 'x-session-id': 's-1' } });
  // Sent back to back, a request may find the last one's socket not yet free (fetch opens a second one too); a step later it is.
  for (let i = 0; i < 3; i++) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: `again ${i}` }] });
  }

  expect(first.choices[0]?.message.content).toBe('hello');
  expect(seen[0]).toMatchObject({ method: 'POST', url: '/v1/chat/completions' });
  expect(seen[0]?.headers).toMatchObject({ authorization: 'Bearer sk-test-key', 'x-session-id': 's-1', 'content-type': 'application/json' });
  expect(JSON.parse(seen[0]?.body ?? '')).toEqual({ model: 'm', messages: [{ role: 'user', content: 'hé 日本' }] });
  expect(seen.map((s) => s.socket)).toEqual([1, 1, 1, 1]);
});

test('a compressed answer is decompressed (gzip, deflate, br), and its wire length and encoding are not passed on', async () => {
  const json = Buffer.from(JSON.stringify(completion('squeezed')));
  for (const encoding of ['gzip', 'deflate', 'br'] as const) {
    answer = (_req, res) => {
      const packed = encoding === 'gzip' ? gzipSync(json) : encoding === 'deflate' ? deflateSync(json) : brotliCompressSync(json);
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': encoding, 'content-length': packed.length });
      res.end(packed);
    };
    const out = await sdk().chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }] });
    expect(out.choices[0]?.message.content).toBe('squeezed');
    const raw = await modelHttp.fetch(`${base}/v1/chat/completions`, { method: 'POST', body: '{}' });
    expect([raw.headers.get('content-encoding'), raw.headers.get('content-length')]).toEqual([null, null]);
    expect(await raw.text()).toBe(json.toString());
  }
});

test('the query string is kept, headers given twice arrive as a list, and repeated response headers all reach the caller', async () => {
  answer = (_req, res) => {
    res.setHeader('set-cookie', ['a=1', 'b=2']);
    res.setHeader('content-type', 'application/json');
    res.end('{"ok":true}');
  };
  const res = await modelHttp.fetch(`${base}/v1/models?api-version=2024-10-21&x=1`, {
    method: 'GET',
    headers: [
      ['Accept', 'application/json'],
      ['accept', 'text/plain'],
    ],
  });

  expect(seen[0]?.url).toBe('/v1/models?api-version=2024-10-21&x=1');
  expect(seen[0]?.headers.accept).toBe('application/json, text/plain');
  expect(res.status).toBe(200);
  expect(res.url).toBe(`${base}/v1/models?api-version=2024-10-21&x=1`);
  expect(res.headers.getSetCookie()).toEqual(['a=1', 'b=2']);
  expect(await res.json()).toEqual({ ok: true });
});

test('an answer with no body (204) gives a Response without one', async () => {
  answer = (_req, res) => {
    res.writeHead(204);
    res.end();
  };
  const res = await modelHttp.fetch(`${base}/v1/nothing`, { method: 'DELETE' });
  expect(res.status).toBe(204);
  expect(res.body).toBeNull();
});

test('an error status reaches the SDK with its headers, so a 429\'s Retry-After sets the next retry', async () => {
  answer = (_req, res) => {
    res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '7' });
    res.end(JSON.stringify({ error: { message: 'slow down', type: 'rate_limit' } }));
  };
  const failure = await sdk()
    .chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }] })
    .then(() => undefined, (err: unknown) => err);

  expect(failure).toBeInstanceOf(OpenAI.RateLimitError);
  const classified = classifyModelError(failure, 'm', `${base}/v1`);
  expect(classified.message).toContain('rate limiting requests (429): 429 slow down');
  expect(classified.nextRetryDelay).toBe(7_000);
});

test('a model server that is not there is named with the cause, never the key', async () => {
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const port = (closed.address() as AddressInfo).port;
  await new Promise<void>((resolve) => closed.close(() => resolve()));
  const client = new OpenAI({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: 'sk-secret-123', maxRetries: 0, fetch: modelHttp.fetch });

  const failure = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }] }).then(() => undefined, (err: unknown) => err);

  expect(failure).toBeInstanceOf(OpenAI.APIConnectionError);
  const classified = classifyModelError(failure, 'm', `http://127.0.0.1:${port}/v1`);
  expect(classified.message).toMatch(new RegExp(`Could not reach the model API at http://127\\.0\\.0\\.1:${port}/v1: .*ECONNREFUSED`));
  expect(classified.message).not.toContain('sk-secret-123');
});

test('an abort while the answer streams ends the stream where it was and closes the connection', async () => {
  let closedByClient!: () => void;
  const serverSawClose = new Promise<void>((resolve) => (closedByClient = resolve));
  answer = (req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(`data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content: 'one' }, finish_reason: null }] })}\n\n`);
    req.socket.once('close', () => closedByClient());
  };
  const controller = new AbortController();
  const stream = await sdk().chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }], stream: true }, { signal: controller.signal });
  const pieces: string[] = [];
  // The SDK ends an aborted stream quietly, as under Node's fetch; the model activity then sees its signal aborted.
  for await (const chunk of stream) {
    pieces.push(chunk.choices[0]?.delta.content ?? '');
    controller.abort();
  }

  expect(pieces).toEqual(['one']);
  await serverSawClose;
  // A later request opens a new connection: the aborted one is not handed out again.
  answer = (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(completion('after')));
  };
  const after = await sdk().chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'y' }] });
  expect(after.choices[0]?.message.content).toBe('after');
});

test('a body it does not send itself (a stream) goes through the built-in fetch', async () => {
  answer = (_req, res, body) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end(`got ${body}`);
  };
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      c.enqueue(new TextEncoder().encode('streamed'));
      c.close();
    },
  });
  const res = await modelHttp.fetch(`${base}/v1/upload`, { method: 'POST', body, duplex: 'half' } as RequestInit);
  expect(await res.text()).toBe('got streamed');
});

describe('bodies read part way (found by review)', () => {
  /** Uncaught exceptions while `run` goes on and 200 ms after: jest would only report them later, against another test. */
  async function uncaughtDuring(run: () => Promise<void>): Promise<unknown[]> {
    const seenErrors: unknown[] = [];
    const listener = (err: unknown): void => void seenErrors.push(err);
    const jestListeners = process.listeners('uncaughtException');
    process.removeAllListeners('uncaughtException');
    process.on('uncaughtException', listener);
    try {
      await run();
      await new Promise((resolve) => setTimeout(resolve, 200));
    } finally {
      process.removeListener('uncaughtException', listener);
      for (const l of jestListeners) process.on('uncaughtException', l);
    }
    return seenErrors;
  }

  test('a read and a cancel together, with more of the body buffered, end the stream without an uncaught error', async () => {
    answer = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      // More than the stream's 16 KB queue, and the response never ends: the body waits, paused, with bytes in hand.
      for (let i = 0; i < 40; i++) res.write(Buffer.alloc(4096, 97));
    };
    const errors = await uncaughtDuring(async () => {
      const res = await modelHttp.fetch(`${base}/v1/stream`, { method: 'POST', body: '{}' });
      await new Promise((resolve) => setTimeout(resolve, 200));
      const reader = (res.body as ReadableStream<Uint8Array>).getReader();
      const read = reader.read();
      const cancelled = reader.cancel();
      expect((await read).value?.byteLength).toBeGreaterThan(0);
      await cancelled;
    });
    expect(errors).toEqual([]);
  });

  test('the SDK leaving a stream early (a break in the loop) costs no uncaught error', async () => {
    const chunk = (i: number): string =>
      `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content: `${i} ${'x'.repeat(100)}` }, finish_reason: null }] })}\n\n`;
    answer = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (let i = 0; i < 400; i++) res.write(chunk(i));
    };
    const errors = await uncaughtDuring(async () => {
      for (const stopAt of [0, 1, 5, 50]) {
        const stream = await sdk().chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }], stream: true });
        // The body fills the stream's queue and pauses with more in hand before the loop starts.
        await new Promise((resolve) => setTimeout(resolve, 100));
        let n = 0;
        for await (const _ of stream) if (n++ === stopAt) break;
      }
    });
    expect(errors).toEqual([]);
  });

  test('a compressed stream that is aborted, or cut, fails its read instead of waiting for ever, and lets its socket go', async () => {
    for (const ending of ['abort', 'reset'] as const) {
      let socketClosed!: () => void;
      const closed = new Promise<void>((resolve) => (socketClosed = resolve));
      answer = (req, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'content-encoding': 'gzip' });
        const gzip = createGzip({ flush: zlibConstants.Z_SYNC_FLUSH });
        gzip.pipe(res);
        gzip.write('data: {"i":0}\n\n');
        req.socket.once('close', () => socketClosed());
        if (ending === 'reset') setTimeout(() => req.socket.destroy(), 50);
      };
      const controller = new AbortController();
      const res = await modelHttp.fetch(`${base}/v1/stream`, { method: 'POST', body: '{}', signal: controller.signal });
      const reader = (res.body as ReadableStream<Uint8Array>).getReader();
      expect(new TextDecoder().decode((await reader.read()).value)).toBe('data: {"i":0}\n\n');
      if (ending === 'abort') controller.abort();
      const outcome = await Promise.race([
        reader.read().then(
          () => 'read on',
          (err: unknown) => `${(err as Error).name}: ${(err as Error).message}`,
        ),
        new Promise((resolve) => setTimeout(() => resolve('still waiting after 2 s'), 2_000)),
      ]);
      expect(outcome).toBe(ending === 'abort' ? 'AbortError: This operation was aborted' : 'TypeError: terminated');
      await closed;
    }
  });

  test('a gzip body cut before its trailer gives what it has, as fetch does', async () => {
    const whole = gzipSync(Buffer.from(JSON.stringify(completion('cut short'))));
    answer = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      res.end(whole.subarray(0, whole.length - 8));
    };
    const res = await modelHttp.fetch(`${base}/v1/chat/completions`, { method: 'POST', body: '{}' });
    expect(await res.json()).toEqual(completion('cut short'));
  });

  test('close() does not wait for ever on a body nobody reads', async () => {
    answer = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: {}\n\n');
    };
    await modelHttp.fetch(`${base}/v1/stream`, { method: 'POST', body: '{}' });
    const started = Date.now();
    await modelHttp.close(200);
    expect(Date.now() - started).toBeLessThan(1_500);
  });
});

test('headers from another Headers class (undici\'s own) are all sent, the key among them', async () => {
  answer = (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{}');
  };
  const headers = new UndiciHeaders({ authorization: 'Bearer sk-test-key', 'x-session-id': 's-2' });
  await modelHttp.fetch(`${base}/v1/x`, { method: 'POST', body: '{}', headers: headers as unknown as Headers });
  expect(seen[0]?.headers).toMatchObject({ authorization: 'Bearer sk-test-key', 'x-session-id': 's-2' });
});
