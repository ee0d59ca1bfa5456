import { Context, log } from '@temporalio/activity';
import type { PromptPartStore } from './prompt-part-store';
import type { ArchivedEventsPage, ArchivedSession, ReadArchivedEventsInput, SaveArchiveInput, SessionArchiveRepository } from './session-archive';

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
    async expireArchives(input: { now?: string }): Promise<{ expired: number }> {
      return repo.expire(input.now ? new Date(input.now) : new Date());
    },
  };
}
