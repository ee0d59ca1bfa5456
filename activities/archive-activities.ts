import { Context, log } from '@temporalio/activity';
import type { PromptPartStore } from './prompt-part-store';
import type { ArchivedEventsPage, ArchivedSession, ReadArchivedEventsInput, SaveArchiveInput, SessionArchiveRepository } from './session-archive';

/** Headers written before the split whose content one maintenance sweep moves out (about 0.1 s each on FerretDB). */
const INLINE_MOVES_PER_SWEEP = 200;

export function createArchiveActivities(repo: SessionArchiveRepository, promptParts?: PromptPartStore) {
  return {
    async loadArchive(input: { sessionId: string }): Promise<ArchivedSession | null> {
      return repo.load(input.sessionId);
    },
    async saveArchive(input: SaveArchiveInput): Promise<{ version: number }> {
      const saved = await repo.save(input);
      // The session's runs are over: the prompt parts they sent by reference are read by no one now. Deleted behind
      // the save, best effort: the archive must not wait on it (a part left behind is only bytes).
      const workflowId = Context.current().info.workflowExecution?.workflowId;
      if (promptParts && workflowId) {
        void promptParts.deleteSession(workflowId).catch((err: unknown) => log.warn('could not delete the archived session\'s prompt parts', { workflowId, error: String(err) }));
      }
      return saved;
    },
    async readArchivedEvents(input: ReadArchivedEventsInput): Promise<ArchivedEventsPage | null> {
      return repo.readEvents(input);
    },
    /** The maintenance sweep: expires archives past their retention, and moves inline content out of old headers (a batch a sweep). */
    async expireArchives(input: { now?: string }): Promise<{ expired: number; moved: number }> {
      const { expired } = await repo.expire(input.now ? new Date(input.now) : new Date());
      return { expired, moved: await repo.moveInlineContent(INLINE_MOVES_PER_SWEEP) };
    },
  };
}
