import type { ChatMessage } from '../../workflows/chat-message';

/** The turns an extraction pass reads, as the workflow keeps them. */
export interface ExtractionTurn {
  turnId: string;
  messages: ChatMessage[];
  /** ISO time the turn started; when the user said what it holds. */
  startedAt?: string;
}

/** One message of the numbered transcript the extraction model sees as `#index`. */
export interface TranscriptMessage {
  index: number;
  turnId: string;
  /** Position inside its turn's `messages`, for the memory's source. */
  indexInTurn: number;
  role: 'user' | 'assistant' | 'tool';
  content: string;
  toolCallId?: string;
  /** Tools the assistant called in this message. */
  toolNames?: string[];
}

/** Numbers every non-system message across the turns, in order. */
export function flattenTurns(turns: ExtractionTurn[]): TranscriptMessage[] {
  const out: TranscriptMessage[] = [];
  for (const turn of turns) {
    turn.messages.forEach((message, indexInTurn) => {
      const base = { index: out.length, turnId: turn.turnId, indexInTurn };
      switch (message.role) {
        case 'system':
          return;
        case 'user':
          out.push({ ...base, role: 'user', content: message.content });
          return;
        case 'assistant':
          out.push({
            ...base,
            role: 'assistant',
            content: message.content ?? '',
            ...(message.tool_calls?.length ? { toolNames: message.tool_calls.map((c) => c.function.name) } : {}),
          });
          return;
        case 'tool':
          out.push({ ...base, role: 'tool', content: message.content, toolCallId: message.tool_call_id });
          return;
      }
    });
  }
  return out;
}
