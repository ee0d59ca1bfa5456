import { ActivityFailure, isCancellation, log, proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import { fitTurnsInput } from './carried-state-budget';
import type { MemoryActivities } from '../activities/memory/memory-activity-types';
import { FailureType } from './failure-types';
import { isPatched } from './patches';
import type { SessionRun } from './session-run';
import type { Turn } from './session-types';

// Recall reads MongoDB and scores in memory: short, so a local activity spares a server round trip per turn.
const { recallMemories } = proxyLocalActivities<MemoryActivities>({
  startToCloseTimeout: '10 seconds',
  retry: { maximumAttempts: 2, initialInterval: '200 milliseconds' },
});
const { extractMemories } = proxyActivities<MemoryActivities>({
  startToCloseTimeout: '2 minutes',
  retry: { maximumAttempts: 3, initialInterval: '1 second', nonRetryableErrorTypes: [FailureType.ModelRequestInvalid, FailureType.ModelAuthFailed] },
});

/** Turns kept for the next memory extraction pass, at most. */
const MAX_PENDING_EXTRACTION = 20;

/**
 * Patch id: the turns of an extraction pass that failed after its retries
 * go into the next pass, once (a turn whose second pass fails too is let
 * go, so a turn the extractor cannot take is not tried every turn). Before,
 * they were dropped at the first failure. Asked only once a pass has failed.
 */
export const EXTRACTION_RETRIED_ONCE = 'extraction-retried-once';

export interface Recalled {
  lines: { strong: string[]; weak: string[] };
  injectedIds: string[];
}

/** Long-term memory as one session run uses it: recall before a turn, extraction after, in the background. */
export class SessionMemory {
  private work: Promise<void> = Promise.resolve();
  /** Turns this run already put back once after a failed pass (kept for the run only: a new run may try them once more). */
  private readonly putBack = new Set<string>();

  constructor(private readonly run: SessionRun) {}

  /** Recalled memories for this turn's prompt; a failed recall costs the turn its memories, not the turn. */
  async recall(turnId: string, query: string): Promise<Recalled> {
    const { options, sessionId, events } = this.run;
    const none: Recalled = { lines: { strong: [], weak: [] }, injectedIds: [] };
    if (!options.memory.enabled) return none;
    try {
      const r = await recallMemories.executeWithOptions(
        { startToCloseTimeout: '10 seconds', retry: { maximumAttempts: 2, initialInterval: '200 milliseconds' }, summary: 'recall memories' },
        [{ namespace: options.namespace, query, sessionId, turnId }],
      );
      this.run.counters.memoriesRecalled += r.strong.length + r.weak.length;
      if (r.strong.length + r.weak.length > 0) {
        events.emit({ type: 'memory_recalled', turnId, strong: r.strong.map((m) => m.shortId), weak: r.weak.map((m) => m.shortId), tookMs: r.tookMs });
      }
      return { lines: { strong: r.strong.map((m) => m.line), weak: r.weak.map((m) => m.line) }, injectedIds: r.injectedIds };
    } catch (err) {
      if (isCancellation(err)) throw err;
      events.emit({ type: 'error', turnId, errorType: 'MemoryRecallFailed', message: `Memories could not be recalled this turn: ${err instanceof Error ? err.message : String(err)}` });
      return none;
    }
  }

  /**
   * A finished turn joins the next extraction pass, which starts now when the
   * message calls for it (`extractNow`, asked only with memory on) or enough
   * turns wait.
   */
  afterTurn(finished: Turn, extractNow: () => boolean): void {
    const { options } = this.run;
    if (!options.memory.enabled) return;
    this.run.pendingExtraction = [...this.run.pendingExtraction, finished].slice(-MAX_PENDING_EXTRACTION);
    if (extractNow()) this.schedule('event');
    else if (this.run.pendingExtraction.length >= options.memory.extractEveryTurns) this.schedule('periodic');
  }

  /**
   * Extracts long-term memories from the turns since the last pass, in the
   * background: the next turn does not wait for it, continue-as-new and
   * archive do.
   */
  schedule(reason: 'event' | 'periodic' | 'archive'): void {
    const { options, sessionId, events } = this.run;
    const turns = this.run.pendingExtraction;
    this.run.pendingExtraction = [];
    if (turns.length === 0) return;
    // The turn the previous pass ended with: a question asked there and answered "yes" now is a confirmation this pass can see.
    const context = this.run.lastExtractedTurn;
    this.run.lastExtractedTurn = turns.at(-1);
    const asInput = (t: Turn) => ({ turnId: t.turnId, messages: t.messages, startedAt: t.startedAt });
    // The context turn goes first, and so is the first left out when even the gist of every turn does not fit.
    const inputOf = (all: Turn[]) => {
      const withContext = context !== undefined && all.length > turns.length;
      const own = withContext ? all.slice(1) : all;
      return { namespace: options.namespace, sessionId, turns: own.map(asInput), ...(withContext ? { contextTurns: [asInput(all[0] as Turn)] } : {}), reason };
    };
    const fitted = fitTurnsInput(context ? [context, ...turns] : turns, inputOf);
    if (fitted.dropped.length > 0) log.warn(`The turns for memory extraction were too large for one activity input; left out: ${fitted.dropped.join(', ')}`);
    this.work = this.work.then(async () => {
      try {
        await extractMemories.executeWithOptions(
          {
            startToCloseTimeout: '2 minutes',
            retry: { maximumAttempts: 3, initialInterval: '1 second', nonRetryableErrorTypes: [FailureType.ModelRequestInvalid, FailureType.ModelAuthFailed] },
            summary: `extract memories (${reason}, ${turns.length} turns)`,
          },
          [inputOf(fitted.turns)],
        );
        this.run.counters.memoryExtractions += 1;
      } catch (err) {
        if (!(err instanceof ActivityFailure)) throw err;
        const again = isPatched(EXTRACTION_RETRIED_ONCE) ? turns.filter((t) => !this.putBack.has(t.turnId)) : [];
        for (const t of again) this.putBack.add(t.turnId);
        // Older than the turns that came in meanwhile: they go first, and the oldest go first past the cap.
        if (again.length > 0) this.run.pendingExtraction = [...again, ...this.run.pendingExtraction].slice(-MAX_PENDING_EXTRACTION);
        const next = again.length > 0 ? `; its ${again.length} turn(s) go into the next pass` : '';
        events.emit({ type: 'error', errorType: 'MemoryExtractionFailed', message: `Memory extraction (${reason}) failed: ${err.cause?.message ?? err.message}${next}` });
      }
    });
  }

  /** Resolves when every extraction pass started so far has ended. */
  settled(): Promise<void> {
    return this.work;
  }
}
