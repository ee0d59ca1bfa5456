import type { Db } from 'mongodb';

/** Where workers of earlier versions stored prompt parts; this version stores and reads none there. */
export const PROMPT_PARTS_COLLECTION = 'prompt_parts';

/**
 * The prompt parts earlier versions stored in MongoDB. They serve only an
 * earlier worker still running a session's run during an upgrade, so the
 * maintenance sweep deletes them once a day old, and the collection empties
 * itself.
 */
export class LegacyPromptParts {
  constructor(private readonly db: Db) {}

  /** Deletes the parts stored before `before`; how many. */
  async deleteStoredBefore(before: Date): Promise<number> {
    const { deletedCount } = await this.db.collection<{ createdAt: Date }>(PROMPT_PARTS_COLLECTION).deleteMany({ createdAt: { $lt: before } });
    return deletedCount;
  }
}
