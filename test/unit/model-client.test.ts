import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { modelClientLogger } from '../../workers/redacting-logger';
import { completeJson, ModelPurpose } from '../../activities/model-call';

const KEY = 'sk-live-abcdefghijklmnop';

/** A broken gateway (a fault injector): a 200 stream whose data line is not JSON and echoes the key, 10,000 characters long. */
async function echoingGateway(): Promise<Server> {
  const server = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end(`data: upstream refused ${String(req.headers.authorization)} ${'x'.repeat(10_000)}\n\ndata: [DONE]\n\n`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

it('what the openai SDK logs (a stream line that is not JSON) reaches the log with the key replaced and the line cut', async () => {
  const server = await echoingGateway();
  const lines: Array<[string, string]> = [];
  try {
    const openai = new OpenAI({
      baseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
      apiKey: KEY,
      maxRetries: 0,
      logger: modelClientLogger([KEY], (level, line) => void lines.push([level, line])),
    });
    const stream = await openai.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }], stream: true });
    await expect((async () => {
      for await (const _chunk of stream) void _chunk;
    })()).rejects.toThrow();
  } finally {
    server.close();
  }
  expect(lines.length).toBeGreaterThan(0);
  const all = lines.map(([, line]) => line).join('\n');
  expect(all).toContain('upstream refused Bearer ');
  expect(all).not.toContain(KEY);
  for (const [, line] of lines) expect(line.length).toBeLessThan(2_100);
  expect(lines.every(([, line]) => line.startsWith('[openai] '))).toBe(true);
});

describe('a JSON completion answered with something else', () => {
  it('a 200 whose body is an error object is the server\'s answer, named, not "could not reach"', async () => {
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'daily quota used up' } }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const openai = new OpenAI({ baseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, apiKey: KEY, maxRetries: 0 });
      const attempt = completeJson({ openai }, { purpose: ModelPurpose.Summary, model: 'm', sessionId: 's' }, [{ role: 'user', content: 'hi' }], (c) => c);
      // Before: "Could not reach the model API: Cannot read properties of undefined (reading '0')".
      await expect(attempt).rejects.toThrow('The model API answered 200 without a completion: daily quota used up');
    } finally {
      server.close();
    }
  });
});
