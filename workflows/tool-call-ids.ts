import type { ToolCall } from './chat-message';

/**
 * Gives every call of one model response an id of its own. The model API
 * pairs each tool message with its call by id, and refuses a conversation
 * where an id answers no pending call or is answered twice: one response
 * with `call_0` twice would make every later request of the session invalid.
 * A repeated (or empty) id becomes `<id>_<index>`, made unique.
 */
export function uniqueCallIds(calls: readonly ToolCall[]): ToolCall[] {
  const seen = new Set<string>();
  return calls.map((call, index) => {
    let id = call.id;
    if (id === '' || seen.has(id)) {
      const base = `${id || 'call'}_${index}`;
      id = base;
      for (let n = 2; seen.has(id); n++) id = `${base}_${n}`;
    }
    seen.add(id);
    return id === call.id ? call : { ...call, id };
  });
}
