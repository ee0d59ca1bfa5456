import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import type { ToolCall } from '../workflows/chat-message';

type ToolCallDelta = NonNullable<ChatCompletionChunk.Choice['delta']['tool_calls']>[number];

/** A fragment that repeats the whole of complete arguments (servers that resend them in a later chunk), not more of them. */
function resentWhole(sofar: string, fragment: string): boolean {
  if (sofar === '' || fragment !== sofar) return false;
  try {
    JSON.parse(sofar);
    return true;
  } catch {
    return false;
  }
}

/**
 * Tool calls assembled from a streamed chat completion: each chunk carries
 * pieces of one or more calls, told apart by `index` (id and name arrive
 * once, or again in every fragment; the arguments in fragments).
 */
export class StreamedToolCalls {
  private readonly calls = new Map<number, { id: string; name: string; arguments: string }>();
  /** The call the last fragment went to, and the highest index seen. */
  private last: number | undefined;
  private highest = -1;

  /**
   * Where a fragment without an index goes (some servers leave it out): a
   * new id starts a call of its own, anything else continues the call the
   * last fragment went to (or starts the first).
   */
  private slotWithoutIndex(id: unknown): number {
    if (this.last === undefined) return 0;
    const current = this.calls.get(this.last);
    const startsAnother = typeof id === 'string' && id !== '' && current !== undefined && current.id !== '' && current.id !== id;
    return startsAnother ? this.highest + 1 : this.last;
  }

  add(deltas: readonly ToolCallDelta[] | undefined): void {
    // The SDK passes a chunk's JSON as the server wrote it: only strings are taken for the id, name and
    // arguments, so an id sent as a list (say) never reaches the window, the archive or a carried state.
    if (!Array.isArray(deltas)) return;
    for (const tc of deltas as unknown[]) {
      if (tc === null || typeof tc !== 'object') continue;
      const { index, id, function: fn } = tc as { index?: unknown; id?: unknown; function?: { name?: unknown; arguments?: unknown } | null };
      const at = typeof index === 'number' && Number.isSafeInteger(index) && index >= 0 ? index : this.slotWithoutIndex(id);
      this.last = at;
      if (at > this.highest) this.highest = at;
      const entry = this.calls.get(at) ?? { id: '', name: '', arguments: '' };
      if (typeof id === 'string' && id !== '') entry.id = id;
      if (fn !== null && typeof fn === 'object') {
        // The name is set, not appended: some servers (and gateways in front of them) repeat it in every
        // fragment, and `read_fileread_file` matched no tool, on every step. The SDK's own accumulator sets it too.
        if (typeof fn.name === 'string' && fn.name !== '') entry.name = fn.name;
        if (typeof fn.arguments === 'string' && !resentWhole(entry.arguments, fn.arguments)) entry.arguments += fn.arguments;
      }
      this.calls.set(at, entry);
    }
  }

  /** How many calls, and their arguments' characters in all, so far. */
  get size(): { calls: number; argumentChars: number } {
    let argumentChars = 0;
    for (const c of this.calls.values()) argumentChars += c.arguments.length;
    return { calls: this.calls.size, argumentChars };
  }

  /** The calls in index order; a call the server sent without an id gets `fallbackId(index)`. */
  list(fallbackId: (index: number) => string): ToolCall[] {
    return [...this.calls.entries()]
      .sort(([a], [b]) => a - b)
      .map(([index, c]) => ({ id: c.id || fallbackId(index), type: 'function' as const, function: { name: c.name, arguments: c.arguments } }));
  }
}
