import type { ServerResponse } from 'node:http';
import {
  type AssistantTurn,
  type CompletionIdentity,
  chunkBody,
  completionBody,
  finishReasonOf,
  promptTokens,
  usageChunkBody,
  usageFor,
} from './chat-completion-body';
import type { ChatRequest } from './chat-request';
import { sendContextLength, sendRateLimit, sendServerError } from './openai-errors';
import type { StepResponse } from './scenario';
import { SseStream, splitIntoDeltas } from './sse';

const DEFAULT_CHUNK_SIZE = 8;
const ARGUMENT_FRAGMENT_SIZE = 12;
// Hostile-input tests send arguments of several MB; at 12 characters a fragment that is a quarter of a
// million SSE events, each awaited, and 10 to 20 s per call spent on nothing the test checks. Long
// arguments are cut into at most this many fragments instead.
const MAX_ARGUMENT_FRAGMENTS = 512;
const CONTEXT_LIMIT_TOKENS = 128_000;
// Cut off inside a string value: the shape a model produces when it stops mid-call.
const MALFORMED_ARGUMENTS = '{"input": "unterminated';

export interface ChatReply {
  request: ChatRequest;
  response: StepResponse;
  res: ServerResponse;
  /** Aborted when the connection closes. */
  closed: AbortSignal;
  identity: CompletionIdentity;
  nextToolCallId: () => string;
  /** Runs just before the server cuts the connection itself, so that close is not taken for a client abort. */
  onServerCut: () => void;
}

/** Writes one scripted answer in the wire format the `openai` SDK expects, streamed or not. */
export async function replyToChat(reply: ChatReply): Promise<void> {
  const { request, response, res } = reply;
  const stream = request.stream === true;
  switch (response.kind) {
    case 'text':
      return sendTurn(reply, { content: response.text, toolCalls: [] }, response.chunkSize, response.delayMs);
    case 'json':
      return sendTurn(reply, { content: JSON.stringify(response.value) ?? 'null', toolCalls: [] });
    case 'tool_calls':
      return sendTurn(reply, {
        content: response.text ?? null,
        toolCalls: response.calls.map((call) => ({
          id: call.id ?? reply.nextToolCallId(),
          name: call.name,
          arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments),
        })),
      });
    case 'malformed_tool_json':
      return sendTurn(reply, {
        content: null,
        toolCalls: [{ id: response.id ?? reply.nextToolCallId(), name: response.name, arguments: MALFORMED_ARGUMENTS }],
      });
    case 'rate_limit':
      sendRateLimit(res, response.retryAfterSeconds);
      return;
    case 'server_error':
      sendServerError(res);
      return;
    case 'context_length':
      sendContextLength(res, Math.max(promptTokens(request), CONTEXT_LIMIT_TOKENS + 1), CONTEXT_LIMIT_TOKENS);
      return;
    case 'hang':
      // Headers only for a stream, nothing at all otherwise; the connection
      // stays open until the client gives up or the server closes.
      if (stream) new SseStream(res, reply.closed).open();
      return;
    case 'truncated_stream':
      return sendTruncated(reply, response.text);
    case 'raw_chunks':
      return sendRaw(reply, response.chunks);
    default:
      return assertNever(response);
  }
}

async function sendTurn(reply: ChatReply, turn: AssistantTurn, chunkSize?: number, delayMs?: number): Promise<void> {
  const { request, identity, res } = reply;
  const usage = usageFor(request, turn);
  if (request.stream !== true) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(completionBody(identity, turn, usage)));
    return;
  }
  const includeUsage = request.stream_options?.include_usage === true;
  const sse = new SseStream(res, reply.closed);
  sse.open();
  await sse.send(chunkBody(identity, { role: 'assistant' }, null, includeUsage));
  await streamContent(sse, reply, turn.content ?? '', chunkSize ?? DEFAULT_CHUNK_SIZE, delayMs ?? 0);

  for (const [index, call] of turn.toolCalls.entries()) {
    // OpenAI's shape: the first delta of a call names it with empty
    // arguments; later deltas carry only the index and argument text.
    await sse.send(
      chunkBody(
        identity,
        { tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] },
        null,
        includeUsage,
      ),
    );
    for (const fragment of splitIntoDeltas(call.arguments, Math.max(ARGUMENT_FRAGMENT_SIZE, Math.ceil(call.arguments.length / MAX_ARGUMENT_FRAGMENTS)))) {
      await sse.send(
        chunkBody(identity, { tool_calls: [{ index, function: { arguments: fragment } }] }, null, includeUsage),
      );
    }
  }

  await sse.send(chunkBody(identity, {}, finishReasonOf(turn), includeUsage));
  if (includeUsage) await sse.send(usageChunkBody(identity, usage));
  await sse.done();
}

async function streamContent(
  sse: SseStream,
  reply: ChatReply,
  text: string,
  chunkSize: number,
  delayMs: number,
): Promise<void> {
  const includeUsage = reply.request.stream_options?.include_usage === true;
  const deltas = splitIntoDeltas(text, chunkSize);
  for (const [i, content] of deltas.entries()) {
    if (i > 0) await sse.pause(delayMs);
    if (!sse.live) return;
    await sse.send(chunkBody(reply.identity, { content }, null, includeUsage));
  }
}

async function sendTruncated(reply: ChatReply, text: string): Promise<void> {
  const { request, identity, res } = reply;
  const includeUsage = request.stream_options?.include_usage === true;
  if (request.stream !== true) {
    // A non-streaming client gets half a JSON body on a chunked response
    // that never terminates.
    const turn: AssistantTurn = { content: text, toolCalls: [] };
    const body = JSON.stringify(completionBody(identity, turn, usageFor(request, turn)));
    res.writeHead(200, { 'content-type': 'application/json' });
    await new Promise<void>((resolve) => res.write(body.slice(0, Math.floor(body.length / 2)), () => resolve()));
  } else {
    const sse = new SseStream(res, reply.closed);
    sse.open();
    await sse.send(chunkBody(identity, { role: 'assistant' }, null, includeUsage));
    await streamContent(sse, reply, text, DEFAULT_CHUNK_SIZE, 0);
  }
  reply.onServerCut();
  res.destroy();
}

async function sendRaw(reply: ChatReply, chunks: unknown[]): Promise<void> {
  const { request, res } = reply;
  if (request.stream !== true) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(chunks[0]));
    return;
  }
  const sse = new SseStream(res, reply.closed);
  sse.open();
  for (const chunk of chunks) await sse.send(chunk);
  await sse.done();
}

function assertNever(value: never): never {
  throw new Error(`scripted model: unhandled step response ${JSON.stringify(value)}`);
}
