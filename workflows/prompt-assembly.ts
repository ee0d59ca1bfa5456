import type { ChatMessage } from './chat-message';
import { renderKeyFacts, type KeyFact } from './key-facts';
import { isEmptySummary, renderSummary, type SessionSummary } from './session-summary';
import type { Turn } from './session-types';

export interface PromptParts {
  systemPrompt: string;
  keyFacts: readonly KeyFact[];
  summary: SessionSummary;
  /** Lines already formatted by the memory layer, strong first; empty when memory is off. */
  recalledMemories: { strong: readonly string[]; weak: readonly string[] };
  /** Turns evicted from the window whose fold into the summary has not succeeded yet. */
  unfolded: readonly Turn[];
  window: readonly Turn[];
  /** The running turn's messages, the user's first. */
  current: readonly ChatMessage[];
}

/**
 * Builds what the model reads, in a fixed order: system prompt, key facts,
 * summary, recalled memories, then the raw turns. Each region is labelled so
 * the model can tell old context from the current conversation.
 */
export function assemblePrompt(parts: PromptParts): ChatMessage[] {
  const regions: string[] = [parts.systemPrompt];
  if (parts.keyFacts.length) {
    regions.push(`## Key facts (pinned, latest values win)\n${renderKeyFacts(parts.keyFacts)}`);
  }
  if (!isEmptySummary(parts.summary)) {
    regions.push(`## Summary of the earlier conversation (older than the messages below)\n${renderSummary(parts.summary)}`);
  }
  const { strong, weak } = parts.recalledMemories;
  if (strong.length || weak.length) {
    const lines = ['## Recalled memories (from earlier sessions, not part of this conversation; cite the ids you rely on as [mem:id])'];
    if (strong.length) lines.push('Remembered:', ...strong);
    if (weak.length) lines.push('Tentative (the user may have said this; confirm before relying on it):', ...weak);
    regions.push(lines.join('\n'));
  }
  regions.push('## Current conversation\nThe messages after this one are the most recent turns, verbatim, oldest first.');
  return [
    { role: 'system', content: regions.join('\n\n') },
    ...parts.unfolded.flatMap((t) => t.messages),
    ...parts.window.flatMap((t) => t.messages),
    ...parts.current,
  ];
}
