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

/**
 * Splits the turns still waiting to be folded into those that stay raw in
 * the prompt and the oldest ones past `maxTokens`, which a summarizer that
 * keeps failing would otherwise let grow without end (in every prompt, and
 * in the state carried across continue-as-new). The newest turn stays while
 * it alone fits.
 */
export function planUnfoldedCap(unfolded: readonly Turn[], maxTokens: number): { keep: Turn[]; compact: Turn[] } {
  let tokens = unfolded.reduce((sum, t) => sum + turnTokens(t), 0);
  let start = 0;
  while (tokens > maxTokens && start < unfolded.length) {
    tokens -= turnTokens(unfolded[start] as Turn);
    start++;
  }
  return { keep: unfolded.slice(start), compact: unfolded.slice(0, start) };
}

const NOTE_QUOTE_CHARS = 140;

/** A turn in one line of the summary's notes, for when no summarizer could fold it: what the user asked and what came back, cut short. */
export function turnNote(turn: Turn): string {
  const quote = (text: string) => {
    const flat = text.replace(/\s+/g, ' ').trim();
    return flat.length > NOTE_QUOTE_CHARS ? `${flat.slice(0, NOTE_QUOTE_CHARS - 1)}…` : flat;
  };
  const asked = turn.messages.find((m) => m.role === 'user')?.content ?? '';
  const answer = [...turn.messages].reverse().find((m) => m.role === 'assistant' && typeof m.content === 'string' && m.content !== '')?.content ?? '';
  const said = asked ? `the user said "${quote(asked)}"` : 'no user text';
  const replied = answer ? `; the answer began "${quote(answer)}"` : '';
  return `Turn ${turn.turnId.slice(0, 40)} (${turn.endedAt.slice(0, 10)}, not summarized): ${said}${replied}.`;
}

/** Whether a line of the summary's notes is one `turnNote` wrote. */
export const isTurnNote = (note: string): boolean => /^Turn \S+ \([^)]*, not summarized\): /.test(note);
