import { z } from 'zod';

const item = z.string().min(1).max(400);
/** The summary's notes hold at most this many lines. */
export const MAX_SUMMARY_NOTES = 20;
const list = (max: number) => z.array(item).max(max).default([]);

/**
 * The incremental structured summary of turns that left the window. The
 * sections are the things a summary must not lose: the third option of a
 * list, a task id, a decision, a pending question.
 */
export const SessionSummary = z.object({
  userProfile: list(20).describe('Who the user is: name, role, team, location, anything they said about themselves.'),
  preferences: list(20).describe('How the user wants things done.'),
  decisions: list(30).describe('Decisions reached, with what was decided.'),
  pendingConfirmations: list(20).describe('Questions or actions waiting for the user\'s yes/no.'),
  unfinishedIntents: list(20).describe('Things the user wants that are not done yet.'),
  optionLists: z
    .array(z.object({ topic: item, options: z.array(item).min(1).max(20) }))
    .max(10)
    .default([])
    .describe('Numbered options or candidate lists under discussion, in their original order.'),
  identifiers: z
    .array(z.object({ label: item, value: z.string().min(1).max(200) }))
    .max(40)
    .default([])
    .describe('Ids, dates and deadlines: task ids, meeting ids, order numbers, due dates.'),
  notes: list(MAX_SUMMARY_NOTES).describe('Anything else needed to continue the conversation.'),
});
export type SessionSummary = z.infer<typeof SessionSummary>;

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
