import type { ChatMessage } from './chat-message';
import { isTurnNote, planEviction, planUnfoldedCap, turnNote, type WindowLimits } from './context-window';
import { MAX_SUBJECT_CHARS, clipSubjects, extractKeyFacts, mergeKeyFacts, renderKeyFacts, type KeyFact } from './key-facts';
import { isPatched } from './patches';

/**
 * Patch id: a key fact's subject is clipped to MAX_SUBJECT_CHARS. Before,
 * only its value was: a rule stated in one long word ("never " and 99,000
 * letters) or a tool result's JSON key ending in "Id" became a subject as
 * long, pinned in every prompt, and twenty of them put every model call
 * over its size limit. Asked only for such a subject, so other histories
 * replay unchanged.
 */
export const KEY_FACT_SUBJECTS_CLIPPED = 'key-fact-subjects-clipped';
import { assemblePrompt } from './prompt-assembly';
import { emptySummary, isEmptySummary, MAX_SUMMARY_NOTES, renderSummary, type SessionSummary } from './session-summary';
import type { Turn } from './session-types';

/** The three context layers as carried across continue-as-new and archive. */
export interface ContextState {
  window: Turn[];
  /** Evicted turns not yet folded into the summary: still sent raw, so nothing is dropped. */
  unfolded: Turn[];
  summary: SessionSummary;
  keyFacts: KeyFact[];
}

export const emptyContext = (): ContextState => ({ window: [], unfolded: [], summary: emptySummary(), keyFacts: [] });

/**
 * Window, incremental summary and key facts for one session. Pure: the
 * summarization itself is an activity the workflow runs with `pendingFold()`
 * and reports back through `folded()` or `foldFailed()`.
 */
export class SessionContext {
  constructor(private state: ContextState, private readonly limits: WindowLimits) {}

  get window(): readonly Turn[] {
    return this.state.window;
  }
  get summary(): SessionSummary {
    return this.state.summary;
  }
  get keyFacts(): readonly KeyFact[] {
    return this.state.keyFacts;
  }
  get unfolded(): readonly Turn[] {
    return this.state.unfolded;
  }

  /** Adds a finished turn, pins its key facts and moves what overflows the window to the fold queue. */
  addTurn(turn: Turn): void {
    let facts = extractKeyFacts(turn.messages, turn.turnId, turn.endedAt);
    if (facts.some((f) => f.subject.length > MAX_SUBJECT_CHARS) && isPatched(KEY_FACT_SUBJECTS_CLIPPED)) facts = clipSubjects(facts);
    this.state.keyFacts = mergeKeyFacts(this.state.keyFacts, facts);
    const { keep, evict } = planEviction([...this.state.window, turn], this.limits);
    this.state.window = keep;
    this.state.unfolded = [...this.state.unfolded, ...evict];
  }

  /** Turns waiting to be folded into the summary, oldest first. */
  pendingFold(): Turn[] {
    return [...this.state.unfolded];
  }

  /** The fold of `turns` succeeded: they leave the prompt, the summary replaces the old one. */
  folded(turns: readonly Turn[], summary: SessionSummary): void {
    const done = new Set(turns.map((t) => t.turnId));
    this.state.unfolded = this.state.unfolded.filter((t) => !done.has(t.turnId));
    this.state.summary = summary;
  }

  /**
   * Keeps the turns waiting for a fold within the window's token budget: the
   * oldest past it leave the prompt and become one line each in the
   * summary's notes, which the next fold that succeeds reads with the rest
   * of the summary. The notes stay within their limit: older lines of this
   * kind go first, the model's own notes only when those are gone. Returns
   * the turns compacted (none when within the budget) and how many of them
   * kept a line.
   */
  capUnfolded(): { turns: Turn[]; noted: number } {
    const { keep, compact } = planUnfoldedCap(this.state.unfolded, this.limits.maxTokens);
    if (compact.length === 0) return { turns: [], noted: 0 };
    this.state.unfolded = keep;
    const added = compact.map(turnNote);
    const notes = [...this.state.summary.notes, ...added];
    while (notes.length > MAX_SUMMARY_NOTES) {
      const oldestCompacted = notes.findIndex(isTurnNote);
      notes.splice(oldestCompacted >= 0 ? oldestCompacted : 0, 1);
    }
    this.state.summary = { ...this.state.summary, notes };
    return { turns: compact, noted: added.filter((note) => notes.includes(note)).length };
  }

  /** Whether capUnfolded would compact anything now. */
  get unfoldedOverBudget(): boolean {
    return planUnfoldedCap(this.state.unfolded, this.limits.maxTokens).compact.length > 0;
  }

  /** Turns in the window now. */
  get windowTurns(): number {
    return this.state.window.length;
  }

  /** The share of a prompt's characters taken by the pinned context: key facts and summary. */
  pinnedShare(prompt: readonly ChatMessage[]): number {
    const total = prompt.reduce((n, m) => n + (typeof m.content === 'string' ? m.content.length : 0), 0);
    if (total === 0) return 0;
    const facts = this.state.keyFacts.length ? renderKeyFacts(this.state.keyFacts).length : 0;
    const summary = isEmptySummary(this.state.summary) ? 0 : renderSummary(this.state.summary).length;
    return Math.min(1, (facts + summary) / total);
  }

  prompt(systemPrompt: string, current: readonly ChatMessage[], recalled: { strong: string[]; weak: string[] } = { strong: [], weak: [] }): ChatMessage[] {
    return assemblePrompt({
      systemPrompt,
      keyFacts: this.state.keyFacts,
      summary: this.state.summary,
      recalledMemories: recalled,
      unfolded: this.state.unfolded,
      window: this.state.window,
      current,
    });
  }

  toState(): ContextState {
    return { ...this.state };
  }
}
