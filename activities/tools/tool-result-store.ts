import type { Db } from 'mongodb';

export const TOOL_RESULTS_COLLECTION = 'tool_results';

/**
 * Keeps whole tool results that were too large for the model (and for
 * workflow history), under the call's idempotency key.
 */
export class ToolResultStore {
  constructor(private readonly db: Db) {}

  async save(key: string, toolName: string, content: string): Promise<void> {
    await this.db
      .collection<{ _id: string }>(TOOL_RESULTS_COLLECTION)
      .updateOne({ _id: key }, { $set: { toolName, content, length: content.length, storedAt: new Date() } }, { upsert: true });
  }

  async load(key: string): Promise<string | null> {
    const doc = await this.db.collection<{ _id: string; content?: unknown }>(TOOL_RESULTS_COLLECTION).findOne({ _id: key });
    return typeof doc?.content === 'string' ? doc.content : null;
  }
}

/** Cuts `content` to `max` characters with a note that tells the model where the rest is. */
export function truncateForModel(content: string, max: number, ref: string): { content: string; truncated: boolean } {
  if (content.length <= max) return { content, truncated: false };
  const note = `\n[truncated: showing ${max} of ${content.length} characters; the full result is stored as tool_result ${ref}]`;
  return { content: content.slice(0, Math.max(0, max - note.length)) + note, truncated: true };
}
