import type { Db } from 'mongodb';

export const TOOL_RESULTS_COLLECTION = 'tool_results';

/**
 * Keeps whole tool results that were too large for the model (and for
 * workflow history), under the call's idempotency key.
 */
export class ToolResultStore {
  constructor(private readonly db: Db) {}

  async save(key: string, toolName: string, content: string, sessionId?: string): Promise<void> {
    await this.db
      .collection<{ _id: string }>(TOOL_RESULTS_COLLECTION)
      .updateOne({ _id: key }, { $set: { toolName, content, length: content.length, storedAt: new Date(), ...(sessionId ? { sessionId } : {}) } }, { upsert: true });
  }

  /**
   * Deletes the results of these sessions (their archives expired): by the
   * session they name, and, for results stored before they named one, by the
   * key's `<sessionId>:` prefix. Returns how many went.
   */
  async deleteForSessions(sessionIds: readonly string[]): Promise<number> {
    if (sessionIds.length === 0) return 0;
    const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    // A key is `<sessionId>:turn-<n>:...`, and a session id may hold ":": the turn part keeps `acme` from matching `acme:ticket-7`'s.
    const res = await this.db.collection<{ _id: string }>(TOOL_RESULTS_COLLECTION).deleteMany({
      $or: [{ sessionId: { $in: [...sessionIds] } }, ...sessionIds.map((id) => ({ sessionId: { $exists: false }, _id: { $regex: `^${escape(id)}:turn-\\d+:` } }))],
    } as never);
    return res.deletedCount;
  }

  /** The index the expiry sweep's delete by session uses (on MongoDB; FerretDB reads the collection either way). */
  async ensureIndexes(): Promise<void> {
    await this.db.collection(TOOL_RESULTS_COLLECTION).createIndex({ sessionId: 1 });
  }

  async load(key: string): Promise<string | null> {
    const doc = await this.db.collection<{ _id: string; content?: unknown }>(TOOL_RESULTS_COLLECTION).findOne({ _id: key });
    return typeof doc?.content === 'string' ? doc.content : null;
  }
}

/**
 * Characters of one result kept in the store: MongoDB holds at most 16 MB a
 * document, and 4 million characters are 12 MB at most in UTF-8.
 */
export const MAX_STORED_RESULT_CHARS = 4_000_000;

/** What the store keeps of a result: all of it, or its first MAX_STORED_RESULT_CHARS characters, marked. */
export function storedForm(content: string): string {
  if (content.length <= MAX_STORED_RESULT_CHARS) return content;
  return `${content.slice(0, MAX_STORED_RESULT_CHARS)}\n[cut: the result was ${content.length} characters; the first ${MAX_STORED_RESULT_CHARS} are kept]`;
}

/**
 * Cuts `content` to `max` characters with a note that tells the model where
 * the rest is: stored under `ref` (`stored`: 'whole' or 'start', when only
 * its start fitted), or nowhere ('none', the store failed).
 */
export function truncateForModel(content: string, max: number, ref: string, stored: 'whole' | 'start' | 'none' = 'whole'): { content: string; truncated: boolean } {
  if (content.length <= max) return { content, truncated: false };
  const where =
    stored === 'whole'
      ? `the full result is stored as tool_result ${ref}`
      : stored === 'start'
        ? `its first ${MAX_STORED_RESULT_CHARS} characters are stored as tool_result ${ref}`
        : 'the rest could not be stored';
  const note = `\n[truncated: showing ${max} of ${content.length} characters; ${where}]`;
  return { content: content.slice(0, Math.max(0, max - note.length)) + note, truncated: true };
}
