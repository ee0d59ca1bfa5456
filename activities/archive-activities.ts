import { log } from '@temporalio/activity';
import type { LegacyPromptParts } from './legacy-prompt-parts';
import type { ArchivedEventsPage, ArchivedSession, ReadArchivedEventsInput, SaveArchiveInput, SessionArchiveRepository } from './session-archive';

/** Headers written before the split whose content one maintenance sweep moves out (about 0.1 s each on FerretDB). */
const INLINE_MOVES_PER_SWEEP = 200;
/** Prompt parts an earlier version stored serve only its own workers, during an upgrade: kept a day. */
const LEGACY_PARTS_KEPT_MS = 24 * 60 * 60 * 1000;

export function createArchiveActivities(repo: SessionArchiveRepository, legacyParts?: LegacyPromptParts) {
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
    /**
     * The maintenance sweep: expires archives past their retention, moves inline content out of old headers (a
     * batch a sweep), and deletes the prompt parts earlier versions stored, once a day old (none are read now).
     */
    async expireArchives(input: { now?: string }): Promise<{ expired: number; moved: number; promptParts: number }> {
      const now = input.now ? new Date(input.now) : new Date();
      const { expired } = await repo.expire(now);
      const moved = await repo.moveInlineContent(INLINE_MOVES_PER_SWEEP);
      // Best effort: a failure here must not stop the sweep (the maintenance workflow expires memories next).
      const promptParts = legacyParts
        ? await legacyParts.deleteStoredBefore(new Date(now.getTime() - LEGACY_PARTS_KEPT_MS)).catch((err: unknown) => {
            log.warn('could not delete the prompt parts earlier versions stored', { error: err instanceof Error ? err.message : String(err) });
            return 0;
          })
        : 0;
      return { expired, moved, promptParts };
    },
  };
}
