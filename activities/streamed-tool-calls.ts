import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import type { ToolCall } from '../workflows/chat-message';

type ToolCallDelta = NonNullable<ChatCompletionChunk.Choice['delta']['tool_calls']>[number];

/**
 * Tool calls assembled from a streamed chat completion: each chunk carries
 * pieces of one or more calls, told apart by `index` (id and name arrive
 * once, the arguments in fragments).
 */
export class StreamedToolCalls {
  private readonly calls = new Map<number, { id: string; name: string; arguments: string }>();

  add(deltas: readonly ToolCallDelta[] | undefined): void {
    for (const tc of deltas ?? []) {
      const entry = this.calls.get(tc.index) ?? { id: '', name: '', arguments: '' };
      if (tc.id) entry.id = tc.id;
      if (tc.function?.name) entry.name += tc.function.name;
      if (tc.function?.arguments) entry.arguments += tc.function.arguments;
      this.calls.set(tc.index, entry);
    }
  }

  /** The calls in index order; a call the server sent without an id gets `fallbackId(index)`. */
  list(fallbackId: (index: number) => string): ToolCall[] {
    return [...this.calls.entries()]
      .sort(([a], [b]) => a - b)
      .map(([index, c]) => ({ id: c.id || fallbackId(index), type: 'function' as const, function: { name: c.name, arguments: c.arguments } }));
  }
}
