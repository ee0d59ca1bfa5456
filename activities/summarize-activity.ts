import { ApplicationFailure } from '@temporalio/common';
import { z } from 'zod';
import { FailureType } from '../workflows/failure-types';
import { fitSummaryLimits, MAX_SUMMARY_ITEM_CHARS, SessionSummary, SUMMARY_LIST_LIMITS, renderSummary } from '../workflows/session-summary';
import type { Turn } from '../workflows/session-types';
import { completeJson, ModelPurpose, type ModelCallDeps } from './model-call';

export interface SummarizeInput {
  sessionId: string;
  /** Whose session this is: the fold's tokens are recorded for them. Absent in folds scheduled by runs from before it was passed. */
  namespace?: { tenant: string; user: string };
  previous: SessionSummary;
  evicted: Turn[];
}

/** Marks the summarization request; the scripted model matches on it in tests. */
export const SUMMARIZER_MARKER = 'You maintain the structured summary of a conversation.';

const SECTIONS = Object.entries(SessionSummary.shape)
  .map(([key, schema]) => `- ${key}: ${schema.description ?? ''}`)
  .join('\n');

function transcript(turns: Turn[]): string {
  return turns
    .flatMap((t) =>
      t.messages.map((m) => {
        if (m.role === 'assistant' && m.tool_calls?.length) {
          const calls = m.tool_calls.map((c) => `${c.function.name}(${c.function.arguments})`).join('; ');
          return `[${t.turnId}] assistant: ${m.content ?? ''} [called: ${calls}]`;
        }
        return `[${t.turnId}] ${m.role}: ${m.content ?? ''}`;
      }),
    )
    .join('\n');
}

/**
 * Folds turns that left the window into the previous summary: the model sees
 * the old summary and only the evicted turns, never the whole history, and
 * returns the merged summary. Output that does not parse is a retryable
 * failure: a malformed summary is never accepted.
 */
export function createSummarizeActivity(deps: ModelCallDeps & { model: string }) {
  return {
    async summarizeTurns(input: SummarizeInput): Promise<SessionSummary> {
      const system = [
        SUMMARIZER_MARKER,
        'Merge the new turns into the previous summary and return the whole merged summary as one JSON object with exactly these keys:',
        SECTIONS,
        'Keep every item of the previous summary that is still true; update items the new turns change; remove pending items that were resolved.',
        `Each list holds at most ${Object.entries(SUMMARY_LIST_LIMITS).map(([key, max]) => `${max} ${key}`).join(', ')}, each item at most ${MAX_SUMMARY_ITEM_CHARS} characters: merge or drop the least useful items rather than go over.`,
        'Keep numbered options and candidate lists complete and in their original order. Keep ids, dates and deadlines verbatim.',
        'Return JSON only.',
      ].join('\n');
      const user = `Previous summary (JSON):\n${JSON.stringify(input.previous)}\n\nPrevious summary as text:\n${renderSummary(input.previous) || '(empty)'}\n\nNew turns leaving the window:\n${transcript(input.evicted)}`;
      return completeJson(
        deps,
        { purpose: ModelPurpose.Summary, model: deps.model, temperature: 0, sessionId: input.sessionId, namespace: input.namespace },
        [
          { role: 'system', content: system },
          { role: 'user', content: user },
        ],
        (content) => parseSummary(content, input.previous),
      );
    },
  };
}

const SECTION_KEYS = Object.keys(SessionSummary.shape);
const isEmpty = (summary: Record<string, unknown>): boolean => Object.values(summary).every((v) => !Array.isArray(v) || v.length === 0);

/**
 * The model's summary, or a retryable failure: a malformed summary is never
 * accepted. Every section defaults to empty, so `{}`, `{"summary": "..."}`,
 * snake_case keys or a refusal object parsed as a valid empty summary, and
 * the merge replaced the previous summary with it: everything folded before
 * was gone. An answer with none of the sections, or an empty one where the
 * previous summary held items, is refused.
 */
export function parseSummary(content: string | null, previous: SessionSummary): SessionSummary {
  let json: unknown;
  // Weaker models wrap JSON in a Markdown fence even when told not to.
  const text = (content ?? '').trim().replace(/^```(?:json)?\s*\n?/i, '').replace(/\n?```$/, '');
  try {
    json = JSON.parse(text);
  } catch {
    throw ApplicationFailure.retryable(`The summary is not JSON: ${String(content).slice(0, 200)}`, FailureType.ModelOutputInvalid);
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json) || !SECTION_KEYS.some((k) => k in json)) {
    throw ApplicationFailure.retryable(`The summary has none of the sections ${SECTION_KEYS.join(', ')}: ${String(content).slice(0, 200)}`, FailureType.ModelOutputInvalid);
  }
  const parsed = SessionSummary.safeParse(fitSummaryLimits(json));
  if (!parsed.success) {
    throw ApplicationFailure.retryable(`The summary does not match the schema: ${z.prettifyError(parsed.error).slice(0, 500)}`, FailureType.ModelOutputInvalid);
  }
  if (isEmpty(parsed.data) && !isEmpty(previous)) {
    throw ApplicationFailure.retryable('The merged summary is empty, while the previous one held items: merging must keep what is still true.', FailureType.ModelOutputInvalid);
  }
  return parsed.data;
}
