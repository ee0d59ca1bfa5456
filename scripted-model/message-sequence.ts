import type { ChatRequest } from './chat-request';

export interface SequenceProblem {
  param: string;
  message: string;
}

/**
 * The pairing rule the real API enforces between assistant tool calls and
 * tool results: every call is answered by a `tool` message directly after
 * its assistant message, and no `tool` message stands alone. Checking it
 * here turns a runtime bug that only a real provider would reject into a
 * loud 400 in our own tests.
 */
export function findSequenceProblem(request: ChatRequest): SequenceProblem | undefined {
  const messages = request.messages;
  let i = 0;
  while (i < messages.length) {
    const message = messages[i];
    if (message === undefined) break;
    if (message.role === 'tool') {
      return {
        param: `messages[${i}].role`,
        message:
          `messages[${i}]: a message with role 'tool' must be a response to a preceding assistant message ` +
          `with 'tool_calls' (tool_call_id ${message.tool_call_id})`,
      };
    }
    const calls = message.role === 'assistant' ? (message.tool_calls ?? []) : [];
    if (calls.length === 0) {
      i++;
      continue;
    }
    const pending = new Set(calls.map((call) => call.id));
    let j = i + 1;
    for (let next = messages[j]; next?.role === 'tool'; next = messages[++j]) {
      if (!pending.delete(next.tool_call_id)) {
        return {
          param: `messages[${j}].tool_call_id`,
          message:
            `messages[${j}]: tool_call_id '${next.tool_call_id}' does not answer a pending call ` +
            `of messages[${i}] (unknown or already answered)`,
        };
      }
    }
    if (pending.size > 0) {
      return {
        param: `messages[${i}].tool_calls`,
        message:
          `messages[${i}]: an assistant message with 'tool_calls' must be followed by tool messages ` +
          `responding to each 'tool_call_id'; missing: ${[...pending].join(', ')}`,
      };
    }
    i = j;
  }
  return undefined;
}
