import { z } from 'zod';

/** Characters in one item of the summary. */
export const MAX_SUMMARY_ITEM_CHARS = 400;
const MAX_IDENTIFIER_VALUE_CHARS = 200;
/** The summary's notes hold at most this many lines. */
export const MAX_SUMMARY_NOTES = 20;
/** Items each list of the summary holds at most. */
export const SUMMARY_LIST_LIMITS = {
  userProfile: 20,
  preferences: 20,
  decisions: 30,
  pendingConfirmations: 20,
  unfinishedIntents: 20,
  optionLists: 10,
  identifiers: 40,
  notes: MAX_SUMMARY_NOTES,
} as const;
const OPTIONS_PER_LIST = 20;
const item = z.string().min(1).max(MAX_SUMMARY_ITEM_CHARS);
const list = (max: number) => z.array(item).max(max).default([]);

/**
 * The incremental structured summary of turns that left the window. The
 * sections are the things a summary must not lose: the third option of a
 * list, a task id, a decision, a pending question.
 */
export const SessionSummary = z.object({
  userProfile: list(SUMMARY_LIST_LIMITS.userProfile).describe('Who the user is: name, role, team, location, anything they said about themselves.'),
  preferences: list(SUMMARY_LIST_LIMITS.preferences).describe('How the user wants things done.'),
  decisions: list(SUMMARY_LIST_LIMITS.decisions).describe('Decisions reached, with what was decided.'),
  pendingConfirmations: list(SUMMARY_LIST_LIMITS.pendingConfirmations).describe('Questions or actions waiting for the user\'s yes/no.'),
  unfinishedIntents: list(SUMMARY_LIST_LIMITS.unfinishedIntents).describe('Things the user wants that are not done yet.'),
  optionLists: z
    .array(z.object({ topic: item, options: z.array(item).min(1).max(OPTIONS_PER_LIST) }))
    .max(SUMMARY_LIST_LIMITS.optionLists)
    .default([])
    .describe('Numbered options or candidate lists under discussion, in their original order.'),
  identifiers: z
    .array(z.object({ label: item, value: z.string().min(1).max(MAX_IDENTIFIER_VALUE_CHARS) }))
    .max(SUMMARY_LIST_LIMITS.identifiers)
    .default([])
    .describe('Ids, dates and deadlines: task ids, meeting ids, order numbers, due dates.'),
  notes: list(SUMMARY_LIST_LIMITS.notes).describe('Anything else needed to continue the conversation.'),
});
export type SessionSummary = z.infer<typeof SessionSummary>;

/**
 * A summary from the model brought within the schema's limits before it is
 * checked: lists past their limit keep their newest (last) items, option
 * lists their first options, items past their length are cut, empty ones
 * dropped. A model that merges one note too many into a full list would
 * otherwise fail every fold from then on. Types are left to the schema.
 */
export function fitSummaryLimits(value: unknown): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  const cut = (text: unknown, max: number) => (typeof text === 'string' && text.length > max ? `${text.slice(0, max - 1)}…` : text);
  const items = (list: unknown[], max: number) => list.filter((x) => x !== '').map((x) => cut(x, MAX_SUMMARY_ITEM_CHARS)).slice(-max);
  const out: Record<string, unknown> = { ...(value as Record<string, unknown>) };
  for (const [key, max] of Object.entries(SUMMARY_LIST_LIMITS)) {
    const list = out[key];
    if (!Array.isArray(list)) continue;
    if (key === 'optionLists') {
      out[key] = list.slice(-max).map((entry: unknown) => {
        if (typeof entry !== 'object' || entry === null) return entry;
        const { topic, options } = entry as { topic?: unknown; options?: unknown };
        return { ...entry, topic: cut(topic, MAX_SUMMARY_ITEM_CHARS), ...(Array.isArray(options) ? { options: items(options, Number.MAX_SAFE_INTEGER).slice(0, OPTIONS_PER_LIST) } : {}) };
      });
    } else if (key === 'identifiers') {
      out[key] = list.slice(-max).map((entry: unknown) => {
        if (typeof entry !== 'object' || entry === null) return entry;
        const { label, value: v } = entry as { label?: unknown; value?: unknown };
        return { ...entry, label: cut(label, MAX_SUMMARY_ITEM_CHARS), value: cut(v, MAX_IDENTIFIER_VALUE_CHARS) };
      });
    } else {
      out[key] = items(list, max);
    }
  }
  return out;
}

export const emptySummary = (): SessionSummary => ({
  userProfile: [],
  preferences: [],
  decisions: [],
  pendingConfirmations: [],
  unfinishedIntents: [],
  optionLists: [],
  identifiers: [],
  notes: [],
});

export function isEmptySummary(summary: SessionSummary): boolean {
  return Object.values(summary).every((v) => Array.isArray(v) && v.length === 0);
}

/** The summary as the model reads it: labelled sections, options numbered as they were given. */
export function renderSummary(summary: SessionSummary): string {
  const out: string[] = [];
  const section = (title: string, lines: string[]) => {
    if (lines.length) out.push(`### ${title}`, ...lines.map((l) => `- ${l}`));
  };
  section('Who the user is', summary.userProfile);
  section('Preferences', summary.preferences);
  section('Decisions reached', summary.decisions);
  section('Pending confirmations', summary.pendingConfirmations);
  section('Unfinished intents', summary.unfinishedIntents);
  if (summary.optionLists.length) {
    out.push('### Options and candidate lists under discussion');
    for (const list of summary.optionLists) {
      out.push(`- ${list.topic}:`, ...list.options.map((o, i) => `  ${i + 1}. ${o}`));
    }
  }
  section('Identifiers and dates', summary.identifiers.map((i) => `${i.label}: ${i.value}`));
  section('Other notes', summary.notes);
  return out.join('\n');
}
