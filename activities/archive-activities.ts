import { log } from '@temporalio/activity';
import type { LegacyPromptParts } from './legacy-prompt-parts';
import type { ToolResultStore } from './tools/tool-result-store';
import type { ArchivedEventsPage, ArchivedSession, ReadArchivedEventsInput, SaveArchiveInput, SessionArchiveRepository } from './session-archive';

/** Headers written before the split whose content one maintenance sweep moves out (about 0.1 s each on FerretDB). */
const INLINE_MOVES_PER_SWEEP = 200;
/** Prompt parts an earlier version stored serve only its own workers, during an upgrade: kept a day. */
const LEGACY_PARTS_KEPT_MS = 24 * 60 * 60 * 1000;

export function createArchiveActivities(repo: SessionArchiveRepository, legacyParts?: LegacyPromptParts, toolResults?: ToolResultStore) {
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
     * The maintenance sweep: expires archives past their retention (and deletes their sessions' stored tool
     * results), moves inline content out of old headers (a batch a sweep), and deletes the prompt parts earlier
     * versions stored, once a day old (none are read now).
     */
    async expireArchives(input: { now?: string }): Promise<{ expired: number; moved: number; promptParts: number; toolResults: number }> {
      const now = input.now ? new Date(input.now) : new Date();
      // Whole tool results (up to 4 million characters each, often the user's data) go with their session's archive.
      let toolResultsDeleted = 0;
      const { expired } = await repo.expire(now, toolResults ? async (ids) => (toolResultsDeleted += await toolResults.deleteForSessions(ids)) : undefined);
      const moved = await repo.moveInlineContent(INLINE_MOVES_PER_SWEEP);
      // Best effort: a failure here must not stop the sweep (the maintenance workflow expires memories next).
      const promptParts = legacyParts
        ? await legacyParts.deleteStoredBefore(new Date(now.getTime() - LEGACY_PARTS_KEPT_MS)).catch((err: unknown) => {
            log.warn('could not delete the prompt parts earlier versions stored', { error: err instanceof Error ? err.message : String(err) });
            return 0;
          })
        : 0;
      return { expired, moved, promptParts, toolResults: toolResultsDeleted };
    },
  };
}
