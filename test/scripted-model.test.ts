import OpenAI, {
  APIConnectionError,
  APIError,
  APIUserAbortError,
  BadRequestError,
  InternalServerError,
  RateLimitError,
} from 'openai';
import type {
  ChatCompletionChunk,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from 'openai/resources/chat/completions';
import { createModelFetch, type ModelFetch } from '../activities/model-http';
import { LANE_HEADER, offlineEmbedding, ScriptedModelServer } from '../scripted-model';

const MODEL = 'scripted-test';

const weatherTools: ChatCompletionTool[] = [
  {
    type: 'function',
    function: { name: 'local_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
  },
  {
    type: 'function',
    function: { name: 'local_time', parameters: { type: 'object', properties: { zone: { type: 'string' } } } },
  },
];

const cosine = (a: number[], b: number[]): number => a.reduce((sum, x, i) => sum + x * (b[i] ?? 0), 0);
const norm = (v: number[]): number => Math.sqrt(v.reduce((sum, x) => sum + x * x, 0));

let server: ScriptedModelServer;
let client: OpenAI;

/*
 * Every test runs twice: with Node's built-in fetch under the SDK, and with
 * the fetch the worker gives it (activities/model-http.ts, the default
 * MODEL_HTTP_CLIENT=undici), so both carry the SDK's streams, errors,
 * aborts and retries alike.
 */
let modelHttp: ModelFetch | undefined;

function sdkFor(baseURL: string, lane?: string): OpenAI {
  return new OpenAI({
    baseURL,
    apiKey: 'test',
    maxRetries: 0,
    ...(modelHttp ? { fetch: modelHttp.fetch } : {}),
    ...(lane === undefined ? {} : { defaultHeaders: { [LANE_HEADER]: lane } }),
  });
}

function clientFor(lane?: string): OpenAI {
  return sdkFor(server.baseUrl, lane);
}

function user(text: string): ChatCompletionMessageParam[] {
  return [{ role: 'user', content: text }];
}

async function collect(stream: AsyncIterable<ChatCompletionChunk>): Promise<ChatCompletionChunk[]> {
  const chunks: ChatCompletionChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

async function caught(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the promise to reject');
}

describe.each([
  ['Node\'s fetch', false],
  ['the worker\'s undici fetch', true],
])('under %s', (_name, useModelHttp) => {
  beforeAll(async () => {
    modelHttp = useModelHttp ? createModelFetch() : undefined;
    server = await ScriptedModelServer.start();
    client = clientFor();
  });

  afterAll(async () => {
    await server.close();
    await modelHttp?.close();
  });

  beforeEach(() => {
    server.reset();
  });

  describe('text answers', () => {
    test('streamed text arrives in several deltas that concatenate to the scripted text', async () => {
      const text = 'The quick brown fox jumps over the lazy dog.';
      server.script([{ name: 'greet', match: { lastUserMessage: 'hi' }, respond: { kind: 'text', text, chunkSize: 5 } }]);

      const stream = await client.chat.completions.create({
        model: MODEL,
        messages: user('hi'),
        stream: true,
        stream_options: { include_usage: true },
      });
      const chunks = await collect(stream);

      const contents = chunks.flatMap((c) => (c.choices[0]?.delta.content ? [c.choices[0].delta.content] : []));
      expect(contents.length).toBe(Math.ceil(text.length / 5));
      expect(contents.join('')).toBe(text);
      expect(chunks[0]?.choices[0]?.delta.role).toBe('assistant');
      const finish = chunks.flatMap((c) => (c.choices[0]?.finish_reason ? [c.choices[0].finish_reason] : []));
      expect(finish).toEqual(['stop']);
      expect(chunks.at(-1)?.choices).toEqual([]);
      expect(chunks.at(-1)?.usage?.total_tokens).toBeGreaterThan(0);

      server.assertDone();
      expect(server.requests).toHaveLength(1);
      expect(server.requests[0]).toMatchObject({
        path: '/v1/chat/completions',
        lane: 'default',
        stream: true,
        stepName: 'greet',
        aborted: false,
      });
      expect(server.requests[0]?.finishedAt).toBeGreaterThanOrEqual(server.requests[0]?.receivedAt ?? Infinity);
    });

    test('non-streamed text comes back as one chat.completion with finish_reason stop', async () => {
      server.script([{ respond: { kind: 'text', text: 'Hello!' } }]);

      const completion = await client.chat.completions.create({ model: MODEL, messages: user('hi') });

      expect(completion.object).toBe('chat.completion');
      expect(completion.model).toBe(MODEL);
      expect(completion.choices[0]?.message).toMatchObject({ role: 'assistant', content: 'Hello!' });
      expect(completion.choices[0]?.finish_reason).toBe('stop');
      expect(completion.usage?.prompt_tokens).toBeGreaterThan(0);
      server.assertDone();
    });

    test('delayMs paces the deltas', async () => {
      // Two pauses of 150 ms: 300 ms on the server, of which at least 200 must show at the client however busy the
      // machine (a late first chunk shortens the span it sees); unpaced, the three arrive within a few ms.
      server.script([{ respond: { kind: 'text', text: 'abcdef', chunkSize: 2, delayMs: 150 } }]);

      const arrivals: number[] = [];
      const stream = await client.chat.completions.create({ model: MODEL, messages: user('x'), stream: true });
      for await (const chunk of stream) if (chunk.choices[0]?.delta.content) arrivals.push(Date.now());

      expect(arrivals).toHaveLength(3);
      expect((arrivals.at(-1) ?? 0) - (arrivals[0] ?? 0)).toBeGreaterThanOrEqual(200);
    });

    test('a json step answers with the stringified value, and a respond function sees the request', async () => {
      server.script([
        {
          respond: (req) => ({ kind: 'json', value: { summary: `saw ${req.messages.length} messages`, facts: ['a'] } }),
        },
      ]);

      const completion = await client.chat.completions.create({
        model: MODEL,
        messages: [
          { role: 'system', content: 'summarize' },
          { role: 'user', content: 'one' },
        ],
      });

      const parsed: unknown = JSON.parse(completion.choices[0]?.message.content ?? '');
      expect(parsed).toEqual({ summary: 'saw 2 messages', facts: ['a'] });
    });
  });

  describe('tool calls', () => {
    const parallel = {
      kind: 'tool_calls' as const,
      text: 'Checking both.',
      calls: [
        { name: 'local_weather', arguments: { city: 'Paris, with a long name to split into fragments' } },
        { id: 'call_explicit', name: 'local_time', arguments: '{"zone":"Europe/Paris"}' },
      ],
    };

    test('parallel tool calls accumulate through the SDK stream helper with ids and arguments intact', async () => {
      server.script([{ match: { toolsOffered: ['local_weather', 'local_time'] }, respond: parallel }]);

      const stream = client.chat.completions.stream({
        model: MODEL,
        messages: user('weather and time?'),
        tools: weatherTools,
      });
      const rawChunks: ChatCompletionChunk[] = [];
      stream.on('chunk', (chunk) => rawChunks.push(chunk));
      const final = await stream.finalChatCompletion();

      const message = final.choices[0]?.message;
      expect(final.choices[0]?.finish_reason).toBe('tool_calls');
      expect(message?.content).toBe('Checking both.');
      const calls = (message?.tool_calls ?? []).map((call) =>
        call.type === 'function'
          ? { id: call.id, name: call.function.name, args: JSON.parse(call.function.arguments) as unknown }
          : call,
      );
      expect(calls).toEqual([
        {
          id: 'call_default_1',
          name: 'local_weather',
          args: { city: 'Paris, with a long name to split into fragments' },
        },
        { id: 'call_explicit', name: 'local_time', args: { zone: 'Europe/Paris' } },
      ]);

      // OpenAI's shape: one naming delta per call, then argument-only fragments.
      const toolDeltas = rawChunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
      const firstDeltas = toolDeltas.filter((d) => d.id !== undefined);
      expect(firstDeltas).toEqual([
        { index: 0, id: 'call_default_1', type: 'function', function: { name: 'local_weather', arguments: '' } },
        { index: 1, id: 'call_explicit', type: 'function', function: { name: 'local_time', arguments: '' } },
      ]);
      const fragments = toolDeltas.filter((d) => d.id === undefined);
      expect(fragments.filter((d) => d.index === 0).length).toBeGreaterThan(1);
      for (const fragment of fragments) expect(Object.keys(fragment).sort()).toEqual(['function', 'index']);
      server.assertDone();
    });

    test('parallel tool calls arrive whole in a non-streamed response', async () => {
      server.script([{ respond: parallel }]);

      const completion = await client.chat.completions.create({
        model: MODEL,
        messages: user('both?'),
        tools: weatherTools,
      });

      const calls = completion.choices[0]?.message.tool_calls ?? [];
      expect(completion.choices[0]?.finish_reason).toBe('tool_calls');
      expect(calls.map((c) => c.id)).toEqual(['call_default_1', 'call_explicit']);
      expect(calls.map((c) => (c.type === 'function' ? JSON.parse(c.function.arguments) : null))).toEqual([
        { city: 'Paris, with a long name to split into fragments' },
        { zone: 'Europe/Paris' },
      ]);
    });

    test('hasToolResults tells the call that asks for tools from the call that answers with their results', async () => {
      server.script([
        {
          name: 'ask',
          match: { hasToolResults: false },
          respond: { kind: 'tool_calls', calls: [{ name: 'local_weather', arguments: { city: 'Oslo' } }] },
        },
        {
          name: 'answer',
          match: { hasToolResults: true, lastUserMessage: /weather/ },
          respond: { kind: 'text', text: 'Cold.' },
        },
      ]);

      const first = await client.chat.completions.create({
        model: MODEL,
        messages: user('weather?'),
        tools: weatherTools,
      });
      const assistant = first.choices[0]?.message;
      const call = assistant?.tool_calls?.[0];
      if (assistant === undefined || call === undefined) throw new Error('expected a tool call');
      const second = await client.chat.completions.create({
        model: MODEL,
        tools: weatherTools,
        messages: [...user('weather?'), assistant, { role: 'tool', tool_call_id: call.id, content: '-5C' }],
      });

      expect(second.choices[0]?.message.content).toBe('Cold.');
      expect(server.requests.map((r) => r.stepName)).toEqual(['ask', 'answer']);
      server.assertDone();
    });

    test('malformed tool JSON arrives as an arguments string that JSON.parse rejects, streamed or not', async () => {
      server.script([
        { respond: { kind: 'malformed_tool_json', name: 'local_weather' } },
        { respond: { kind: 'malformed_tool_json', name: 'local_weather', id: 'call_bad' } },
      ]);

      const plain = await client.chat.completions.create({ model: MODEL, messages: user('a'), tools: weatherTools });
      const streamed = await client.chat.completions
        .stream({ model: MODEL, messages: user('b'), tools: weatherTools })
        .finalChatCompletion();

      for (const [completion, id] of [
        [plain, 'call_default_1'],
        [streamed, 'call_bad'],
      ] as const) {
        const call = completion.choices[0]?.message.tool_calls?.[0];
        expect(call?.id).toBe(id);
        expect(call?.type === 'function' && call.function.name).toBe('local_weather');
        const args = call?.type === 'function' ? call.function.arguments : '';
        expect(typeof args).toBe('string');
        expect(() => JSON.parse(args)).toThrow(SyntaxError);
      }
      server.assertDone();
    });
  });

  describe('loud failures', () => {
    test('a mismatched request gets a 500 naming the step and the mismatch, and assertDone throws', async () => {
      server.script([
        {
          name: 'greet',
          match: { lastUserMessage: 'hello', toolsOffered: ['local_weather'] },
          respond: { kind: 'text', text: 'hi' },
        },
      ]);

      const error = await caught(client.chat.completions.create({ model: MODEL, messages: user('goodbye') }));

      expect(error).toBeInstanceOf(InternalServerError);
      const message = (error as Error).message;
      expect(message).toContain('scripted model: unexpected request');
      expect(message).toContain('expected step #1 "greet"');
      expect(message).toContain('last user message was "goodbye"');
      expect(message).toContain('tools local_weather were not offered');
      expect(server.requests[0]?.unexpected).toContain('expected step #1 "greet"');
      expect(() => server.assertDone()).toThrow(/unconsumed step #1 "greet"[\s\S]*unexpected request #1/);
    });

    test('a request after the script ran out is unexpected', async () => {
      server.script([{ respond: { kind: 'text', text: 'only once' } }]);
      await client.chat.completions.create({ model: MODEL, messages: user('one') });

      const error = await caught(client.chat.completions.create({ model: MODEL, messages: user('two') }));

      expect((error as Error).message).toContain('all 1 scripted steps consumed');
      expect(() => server.assertDone()).toThrow(/unexpected request #2/);
    });

    test('an unconsumed step makes assertDone throw until it is consumed', async () => {
      server.script([
        { respond: { kind: 'text', text: 'a' } },
        { name: 'second', respond: { kind: 'text', text: 'b' }, times: 2 },
      ]);
      await client.chat.completions.create({ model: MODEL, messages: user('1') });
      await client.chat.completions.create({ model: MODEL, messages: user('2') });

      expect(() => server.assertDone()).toThrow(/unconsumed step #2 "second"/);
      await client.chat.completions.create({ model: MODEL, messages: user('3') });
      expect(() => server.assertDone()).not.toThrow();
    });

    test('a malformed request body gets a 400 naming the field and counts as unexpected', async () => {
      server.script([{ respond: { kind: 'text', text: 'never' } }]);
      const badMessages = [{ role: 'tool', content: 'orphan' }] as unknown as ChatCompletionMessageParam[];

      const error = await caught(client.chat.completions.create({ model: MODEL, messages: badMessages }));

      expect(error).toBeInstanceOf(BadRequestError);
      expect((error as BadRequestError).param).toBe('messages[0].tool_call_id');
      expect((error as Error).message).toContain('messages[0].tool_call_id');
      expect(() => server.assertDone()).toThrow(/Invalid request body/);
    });

    test('a tool call left without its tool result is refused the way the real API refuses it', async () => {
      const error = await caught(
        client.chat.completions.create({
          model: MODEL,
          messages: [
            ...user('weather?'),
            {
              role: 'assistant',
              content: null,
              tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'local_weather', arguments: '{}' } }],
            },
            ...user('hello?'),
          ],
        }),
      );

      expect(error).toBeInstanceOf(BadRequestError);
      expect((error as Error).message).toContain('missing: call_1');
    });

    test('a typo in a script is rejected when the script is loaded', () => {
      const typo = [{ match: { lastUserMesage: 'x' }, respond: { kind: 'text', text: 'y' } }];
      expect(() => server.script(typo as never)).toThrow(/invalid script.*lastUserMesage/);
    });

    test('a fallback answers what no step expects', async () => {
      const lenient = await ScriptedModelServer.start({ fallback: () => ({ kind: 'text', text: 'fallback says hi' }) });
      try {
        const sdk = sdkFor(lenient.baseUrl);
        const completion = await sdk.chat.completions.create({ model: MODEL, messages: user('anything') });
        expect(completion.choices[0]?.message.content).toBe('fallback says hi');
        expect(lenient.requests[0]?.stepName).toBe('fallback');
        lenient.assertDone();
      } finally {
        await lenient.close();
      }
    });
  });

  describe('fault injection', () => {
    test('rate_limit surfaces as RateLimitError carrying the Retry-After header', async () => {
      server.script([{ respond: { kind: 'rate_limit', retryAfterSeconds: 7 } }]);

      const error = await caught(client.chat.completions.create({ model: MODEL, messages: user('x') }));

      expect(error).toBeInstanceOf(RateLimitError);
      const rateLimit = error as RateLimitError;
      expect(rateLimit.status).toBe(429);
      expect(rateLimit.headers?.get('retry-after')).toBe('7');
      expect(rateLimit.code).toBe('rate_limit_exceeded');
      server.assertDone();
    });

    test('server_error surfaces as InternalServerError', async () => {
      server.script([{ respond: { kind: 'server_error' } }]);

      const error = await caught(client.chat.completions.create({ model: MODEL, messages: user('x'), stream: true }));

      expect(error).toBeInstanceOf(InternalServerError);
      expect((error as InternalServerError).status).toBe(500);
    });

    test('context_length surfaces as BadRequestError with code context_length_exceeded', async () => {
      server.script([{ respond: { kind: 'context_length' } }]);

      const error = await caught(client.chat.completions.create({ model: MODEL, messages: user('x') }));

      expect(error).toBeInstanceOf(BadRequestError);
      expect((error as BadRequestError).code).toBe('context_length_exceeded');
      expect((error as BadRequestError).param).toBe('messages');
    });

    test('aborting a hanging non-streamed request is recorded as aborted', async () => {
      server.script([{ respond: { kind: 'hang' } }]);
      const controller = new AbortController();

      const pending = caught(
        client.chat.completions.create({ model: MODEL, messages: user('x') }, { signal: controller.signal }),
      );
      await server.waitForRequests(1);
      expect(server.requests[0]?.aborted).toBe(false);
      controller.abort();

      expect(await pending).toBeInstanceOf(APIUserAbortError);
      await server.waitUntil((requests) => requests[0]?.aborted === true, { timeoutMs: 2_000 });
      expect(server.requests[0]?.finishedAt).toBeDefined();
      server.assertDone();
    });

    test('aborting a hanging stream after its headers arrived is recorded as aborted', async () => {
      server.script([{ respond: { kind: 'hang' } }]);
      const controller = new AbortController();

      // Resolves once headers arrive: the hang happens while reading the body.
      const stream = await client.chat.completions.create(
        { model: MODEL, messages: user('x'), stream: true },
        { signal: controller.signal },
      );
      const reading = collect(stream);
      setTimeout(() => controller.abort(), 50);

      // The SDK treats a user abort mid-stream as the end of the stream.
      expect(await reading).toEqual([]);
      await server.waitUntil((requests) => requests[0]?.aborted === true, { timeoutMs: 2_000 });
      expect(server.requests[0]).toMatchObject({ stream: true, aborted: true });
    });

    test('aborting a slow stream midway is recorded as aborted and stops the deltas', async () => {
      server.script([{ respond: { kind: 'text', text: 'a'.repeat(40), chunkSize: 1, delayMs: 30 } }]);
      const controller = new AbortController();

      const stream = await client.chat.completions.create(
        { model: MODEL, messages: user('x'), stream: true },
        { signal: controller.signal },
      );
      let deltas = 0;
      for await (const chunk of stream) {
        if (chunk.choices[0]?.delta.content && ++deltas === 3) controller.abort();
      }

      expect(deltas).toBe(3);
      await server.waitUntil((requests) => requests[0]?.aborted === true, { timeoutMs: 2_000 });
      expect((server.requests[0]?.finishedAt ?? Infinity) - (server.requests[0]?.receivedAt ?? 0)).toBeLessThan(40 * 30);
    });

    test('close() ends a hanging request without recording a client abort', async () => {
      const doomed = await ScriptedModelServer.start();
      doomed.script([{ respond: { kind: 'hang' } }]);
      const sdk = sdkFor(doomed.baseUrl);

      const pending = caught(sdk.chat.completions.create({ model: MODEL, messages: user('x') }));
      await doomed.waitForRequests(1);
      await doomed.close();

      expect(await pending).toBeInstanceOf(APIConnectionError);
      expect(doomed.requests[0]).toMatchObject({ aborted: false });
      expect(doomed.requests[0]?.finishedAt).toBeDefined();
    });

    test('latencyMs holds every answer back that long, streamed or not', async () => {
      const slow = await ScriptedModelServer.start({ latencyMs: 250 });
      try {
        const sdk = sdkFor(slow.baseUrl);
        slow.script([{ respond: { kind: 'text', text: 'late' } }, { respond: { kind: 'text', text: 'later' } }]);

        let t0 = performance.now();
        const chunks = await collect(await sdk.chat.completions.create({ model: MODEL, messages: user('x'), stream: true }));
        expect(performance.now() - t0).toBeGreaterThanOrEqual(245);
        expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('late');

        t0 = performance.now();
        const whole = await sdk.chat.completions.create({ model: MODEL, messages: user('x') });
        expect(performance.now() - t0).toBeGreaterThanOrEqual(245);
        expect(whole.choices[0]?.message.content).toBe('later');
        slow.assertDone();
      } finally {
        await slow.close();
      }
    });

    test('a client that hangs up during latencyMs is recorded as aborted and gets nothing; close() during it is no client abort', async () => {
      const slow = await ScriptedModelServer.start({ latencyMs: 5_000 });
      try {
        const sdk = sdkFor(slow.baseUrl);
        slow.script([{ respond: { kind: 'text', text: 'never' } }]);
        const controller = new AbortController();
        const pending = caught(sdk.chat.completions.create({ model: MODEL, messages: user('x') }, { signal: controller.signal }));
        await slow.waitForRequests(1);
        controller.abort();
        expect(await pending).toBeInstanceOf(APIUserAbortError);
        await slow.waitUntil((requests) => requests[0]?.aborted === true, { timeoutMs: 2_000 });
        // Cut short during the wait: finished well before the latency ran out.
        expect((slow.requests[0]?.finishedAt ?? Infinity) - (slow.requests[0]?.receivedAt ?? 0)).toBeLessThan(5_000);
      } finally {
        await slow.close();
      }

      const closing = await ScriptedModelServer.start({ latencyMs: 5_000 });
      closing.script([{ respond: { kind: 'text', text: 'never' } }]);
      const pending = caught(sdkFor(closing.baseUrl).chat.completions.create({ model: MODEL, messages: user('x') }));
      await closing.waitForRequests(1);
      const t0 = performance.now();
      await closing.close();
      expect(performance.now() - t0).toBeLessThan(4_000);
      expect(await pending).toBeInstanceOf(APIConnectionError);
      expect(closing.requests[0]).toMatchObject({ aborted: false });
    });

    test('a latencyMs that is not a number of milliseconds a timer can hold is refused at start', async () => {
      for (const latencyMs of [-1, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 31]) {
        await expect(ScriptedModelServer.start({ latencyMs })).rejects.toThrow(/latencyMs must be a number of milliseconds from 0 to 2147483647/);
      }
    });

    test('a truncated stream delivers its deltas, then the SDK throws `terminated` with no finish_reason', async () => {
      server.script([{ respond: { kind: 'truncated_stream', text: 'partial answer that never ends' } }]);

      const stream = await client.chat.completions.create({ model: MODEL, messages: user('x'), stream: true });
      const chunks: ChatCompletionChunk[] = [];
      let failure: unknown;
      try {
        for await (const chunk of stream) chunks.push(chunk);
      } catch (error) {
        failure = error;
      }

      // undici reports the cut as `TypeError: terminated` and the SDK passes it
      // through unwrapped (from Node's realm, hence no instanceof under jest).
      expect(failure).toMatchObject({ name: 'TypeError', message: 'terminated' });
      expect(failure).not.toBeInstanceOf(APIError);
      expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('partial answer that never ends');
      expect(chunks.some((c) => c.choices[0]?.finish_reason)).toBe(false);
      expect(server.requests[0]).toMatchObject({ aborted: false });
      server.assertDone();
    });

    test('raw chunks reach the SDK as written, whatever their shape; a non-streamed request gets the first as its body', async () => {
      const odd = { id: 'c', object: 'chat.completion.chunk', created: 0, model: MODEL, choices: [{ index: 0, delta: { content: ['a', 'b'] }, finish_reason: null }] };
      server.script([{ respond: { kind: 'raw_chunks', chunks: [odd, { ...odd, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }] } }]);
      const stream = await client.chat.completions.create({ model: MODEL, messages: user('x'), stream: true });
      const chunks: unknown[] = [];
      for await (const chunk of stream) chunks.push(chunk);
      expect(chunks).toEqual([odd, { ...odd, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }]);

      server.script([{ respond: { kind: 'raw_chunks', chunks: [{ choices: 'not a list' }] } }]);
      const body = await client.chat.completions.create({ model: MODEL, messages: user('x') });
      expect(body).toEqual({ choices: 'not a list' });
      server.assertDone();
    });

    test('a truncated non-streamed response fails the call with the same `terminated` error', async () => {
      server.script([{ respond: { kind: 'truncated_stream', text: 'cut' } }]);

      const error = await caught(client.chat.completions.create({ model: MODEL, messages: user('x') }));

      expect(error).toMatchObject({ name: 'TypeError', message: 'terminated' });
    });
  });

  describe('lanes', () => {
    test('lanes have independent queues and tool-call ids, even when their requests interleave', async () => {
      const alice = clientFor('session-alice');
      const bob = clientFor('session-bob');
      server.script(
        [
          { respond: { kind: 'text', text: 'for alice', delayMs: 20, chunkSize: 2 } },
          { respond: { kind: 'tool_calls', calls: [{ name: 'local_time', arguments: {} }] } },
        ],
        { lane: 'session-alice' },
      );
      server.script([{ respond: { kind: 'tool_calls', calls: [{ name: 'local_weather', arguments: {} }] } }], {
        lane: 'session-bob',
      });

      const [aliceText, bobCall] = await Promise.all([
        alice.chat.completions.stream({ model: MODEL, messages: user('a') }).finalContent(),
        bob.chat.completions.create({ model: MODEL, messages: user('b'), tools: weatherTools }),
      ]);
      const aliceCall = await alice.chat.completions.create({ model: MODEL, messages: user('a2'), tools: weatherTools });

      expect(aliceText).toBe('for alice');
      expect(bobCall.choices[0]?.message.tool_calls?.[0]?.id).toBe('call_session-bob_1');
      expect(aliceCall.choices[0]?.message.tool_calls?.[0]?.id).toBe('call_session-alice_1');
      expect(server.requestsFor('session-alice')).toHaveLength(2);
      expect(server.requestsFor('session-bob')).toHaveLength(1);
      server.assertDone('session-alice');
      server.assertDone();
    });

    test('assertDone for one lane ignores another lane’s leftovers', async () => {
      server.script([{ respond: { kind: 'text', text: 'x' } }], { lane: 'busy' });
      server.assertDone('idle');
      expect(() => server.assertDone('busy')).toThrow(/on lane "busy"/);
    });

    test('waitForRequests counts per lane and times out with what it saw', async () => {
      server.script([{ respond: { kind: 'text', text: 'x' } }], { lane: 'l1' });
      await clientFor('l1').chat.completions.create({ model: MODEL, messages: user('x') });

      await server.waitForRequests(1, { lane: 'l1' });
      await expect(server.waitForRequests(1, { lane: 'l2', timeoutMs: 50 })).rejects.toThrow(/on lane "l2", saw 0/);
    });
  });

  describe('embeddings', () => {
    test('the SDK gets deterministic unit vectors through its default base64 path and through floats', async () => {
      const texts = [
        'The user prefers dark roast coffee',
        'The user likes dark roasted coffee',
        'Quarterly tax filing deadline',
      ];

      const viaBase64 = await client.embeddings.create({ model: 'embed', input: texts });
      const viaFloat = await client.embeddings.create({ model: 'embed', input: texts, encoding_format: 'float' });

      const vectors = viaFloat.data.map((d) => d.embedding);
      expect(viaFloat.data.map((d) => d.index)).toEqual([0, 1, 2]);
      for (const [i, vector] of vectors.entries()) {
        expect(vector).toHaveLength(256);
        expect(norm(vector)).toBeCloseTo(1, 6);
        expect(vector).toEqual(offlineEmbedding(texts[i] ?? ''));
        viaBase64.data[i]?.embedding.forEach((x, j) => expect(x).toBeCloseTo(vector[j] ?? NaN, 5));
      }
      const [coffee, coffeeAgain, taxes] = vectors as [number[], number[], number[]];
      expect(cosine(coffee, coffeeAgain)).toBeGreaterThan(cosine(coffee, taxes) + 0.2);
      expect(server.requests.map((r) => r.path)).toEqual(['/v1/embeddings', '/v1/embeddings']);
      server.assertDone();
    });

    test('the embed option replaces the offline embedder', async () => {
      const custom = await ScriptedModelServer.start({ embed: (text) => [text.length, 0, 0] });
      try {
        const sdk = sdkFor(custom.baseUrl);
        const result = await sdk.embeddings.create({ model: 'embed', input: 'four', encoding_format: 'float' });
        expect(result.data[0]?.embedding).toEqual([4, 0, 0]);
      } finally {
        await custom.close();
      }
    });

    test('offlineEmbedding is deterministic, unit length, honours dims, and gives empty text a unit vector too', () => {
      expect(offlineEmbedding('Hello, World')).toEqual(offlineEmbedding('hello world'));
      expect(offlineEmbedding('x', 64)).toHaveLength(64);
      expect(norm(offlineEmbedding('Ünïcödé text 日本語', 32))).toBeCloseTo(1, 9);
      expect(norm(offlineEmbedding('   '))).toBeCloseTo(1, 9);
      expect(() => offlineEmbedding('x', 0)).toThrow(RangeError);
    });
  });
});
