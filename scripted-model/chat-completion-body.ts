import { type ChatRequest, messageText } from './chat-request';

/** Identity shared by every chunk of one completion, as the real API repeats it. */
export interface CompletionIdentity {
  id: string;
  created: number;
  model: string;
}

export interface WireToolCall {
  id: string;
  name: string;
  /** Exactly what the model "wrote"; not necessarily valid JSON. */
  arguments: string;
}

export interface AssistantTurn {
  content: string | null;
  toolCalls: WireToolCall[];
}

export type FinishReason = 'stop' | 'tool_calls';

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

export interface ChunkDelta {
  role?: 'assistant';
  content?: string;
  tool_calls?: Array<{
    index: number;
    id?: string;
    type?: 'function';
    function: { name?: string; arguments: string };
  }>;
}

// Roughly four characters per token: close enough for budget logic under
// test, and deterministic, which a real tokenizer would not buy us here.
const estimateTokens = (text: string): number => Math.ceil(text.length / 4);

export function promptTokens(request: ChatRequest): number {
  const text = request.messages.map(messageText).join('\n');
  const tools = request.tools === undefined ? '' : JSON.stringify(request.tools);
  return estimateTokens(text) + estimateTokens(tools) + request.messages.length * 3;
}

export function usageFor(request: ChatRequest, turn: AssistantTurn): Usage {
  const prompt = promptTokens(request);
  const completion =
    estimateTokens(turn.content ?? '') +
    turn.toolCalls.reduce((sum, call) => sum + estimateTokens(call.name + call.arguments), 0);
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

export function finishReasonOf(turn: AssistantTurn): FinishReason {
  return turn.toolCalls.length > 0 ? 'tool_calls' : 'stop';
}

export function completionBody(identity: CompletionIdentity, turn: AssistantTurn, usage: Usage): unknown {
  const message: Record<string, unknown> = { role: 'assistant', content: turn.content, refusal: null };
  if (turn.toolCalls.length > 0) {
    message['tool_calls'] = turn.toolCalls.map((call) => ({
      id: call.id,
      type: 'function',
      function: { name: call.name, arguments: call.arguments },
    }));
  }
  return {
    id: identity.id,
    object: 'chat.completion',
    created: identity.created,
    model: identity.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: finishReasonOf(turn) }],
    usage,
  };
}

/**
 * One `chat.completion.chunk`. With `include_usage` the real API puts
 * `usage: null` on every chunk and sends the totals in a last chunk whose
 * `choices` is empty (see `usageChunkBody`).
 */
export function chunkBody(
  identity: CompletionIdentity,
  delta: ChunkDelta,
  finishReason: FinishReason | null,
  includeUsage: boolean,
): unknown {
  return {
    id: identity.id,
    object: 'chat.completion.chunk',
    created: identity.created,
    model: identity.model,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
    ...(includeUsage ? { usage: null } : {}),
  };
}

export function usageChunkBody(identity: CompletionIdentity, usage: Usage): unknown {
  return {
    id: identity.id,
    object: 'chat.completion.chunk',
    created: identity.created,
    model: identity.model,
    choices: [],
    usage,
  };
}
