import type { ArchivedEventsPage, ArchivedSession, ReadArchivedEventsInput, SaveArchiveInput, SessionArchiveRepository } from './session-archive';

export function createArchiveActivities(repo: SessionArchiveRepository) {
  return {
    async loadArchive(input: { sessionId: string }): Promise<ArchivedSession | null> {
      return repo.load(input.sessionId);
    },
    async saveArchive(input: SaveArchiveInput): Promise<{ version: number }> {
      return repo.save(input);
    },
    async readArchivedEvents(input: ReadArchivedEventsInput): Promise<ArchivedEventsPage | null> {
      return repo.readEvents(input);
    },
    async expireArchives(input: { now?: string }): Promise<{ expired: number }> {
      return repo.expire(input.now ? new Date(input.now) : new Date());
    },
  };
}
