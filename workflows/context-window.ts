import type { ChatMessage } from './chat-message';
import type { Turn } from './session-types';

export interface WindowLimits {
  maxTurns: number;
  /** Budget for the raw turns, in tokens estimated from characters. */
  maxTokens: number;
  /** Turns folded into the summary at a time, so summarization runs every few turns rather than every turn. */
  foldBatchTurns: number;
}

/** About four characters per token for English text and JSON; good enough for a budget. */
export function estimateTokens(messages: readonly ChatMessage[]): number {
  let chars = 0;
  for (const m of messages) {
    chars += 8;
    if (m.content) chars += m.content.length;
    if (m.role === 'assistant' && m.tool_calls) {
      for (const c of m.tool_calls) chars += c.function.name.length + c.function.arguments.length + 16;
    }
  }
  return Math.ceil(chars / 4);
}

const turnTokens = (t: Turn) => estimateTokens(t.messages);

/**
 * Splits the window into what stays raw and what is evicted. Whole turns
 * only, so a tool call and its result never part. Over the turn limit,
 * evicts down to `maxTurns - foldBatchTurns` in one go; over the token
 * budget, evicts oldest turns until it fits (always keeping the newest turn).
 */
export function planEviction(window: readonly Turn[], limits: WindowLimits): { keep: Turn[]; evict: Turn[] } {
  let start = 0;
  if (window.length > limits.maxTurns) {
    const target = Math.max(1, limits.maxTurns - Math.max(0, limits.foldBatchTurns - 1));
    start = window.length - target;
  }
  let tokens = window.slice(start).reduce((sum, t) => sum + turnTokens(t), 0);
  while (tokens > limits.maxTokens && start < window.length - 1) {
    tokens -= turnTokens(window[start] as Turn);
    start++;
  }
  return { keep: window.slice(start), evict: window.slice(0, start) };
}
