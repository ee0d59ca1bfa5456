import { z } from 'zod';
import type { ChatMessage } from './chat-message';

/**
 * A high-value temporary fact pinned in the prompt: a deadline, a task id, a
 * rule the user changed. One value per subject; a newer one replaces it.
 */
export const KeyFact = z.object({
  subject: z.string(),
  value: z.string(),
  turnId: z.string(),
  updatedAt: z.string(),
  source: z.enum(['user', 'tool']),
});
export type KeyFact = z.infer<typeof KeyFact>;

export interface KeyFactLimits {
  maxFacts: number;
  maxValueChars: number;
}

export const DEFAULT_KEY_FACT_LIMITS: KeyFactLimits = { maxFacts: 20, maxValueChars: 200 };

/** The longest subject a fact keeps (runs with patch `key-fact-subjects-clipped`; workflows/session-context.ts). */
export const MAX_SUBJECT_CHARS = 80;

/** The facts with every subject within MAX_SUBJECT_CHARS. */
export function clipSubjects(facts: readonly KeyFact[]): KeyFact[] {
  return facts.map((f) => (f.subject.length <= MAX_SUBJECT_CHARS ? f : { ...f, subject: clip(f.subject, MAX_SUBJECT_CHARS) }));
}

const MONTH = '(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|jun(?:e)?|jul(?:y)?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)';
const WEEKDAY = '(?:mon|tues|wednes|thurs|fri|satur|sun)day';
const DATE_WORDS = [
  '\\d{4}-\\d{2}-\\d{2}(?:[T ]\\d{2}:\\d{2})?',
  `${MONTH}\\.? \\d{1,2}(?:st|nd|rd|th)?(?:,? \\d{4})?`,
  `\\d{1,2}(?:st|nd|rd|th)? ${MONTH}(?: \\d{4})?`,
  `(?:next |this )?${WEEKDAY}`,
  'tomorrow|tonight|today|next week|end of (?:the )?(?:day|week|month|quarter)',
].join('|');
const DEADLINE = new RegExp(`\\b(?:deadline|due(?: date)?|due by|must be done by|needs? to be (?:done|ready|finished) by|by)\\b[^.?!\\n]{0,40}?\\b(${DATE_WORDS})\\b`, 'i');
const TICKET = /\b([A-Z][A-Z0-9]{1,9}-\d{1,7})\b/g;
// Each run of blanks has one place to go: with \s* three times in a row around optional parts, a long run of blanks
// after a keyword ("my task" and 4,000 spaces) took the engine cubic time, 20 s and more, in a workflow task that the
// SDK ends at 5 s, on every retry: the session froze. The same strings match, with the same groups.
const NAMED_ID = /\b(task|ticket|order|invoice|case|issue|project|booking|account)\s*(?:(?:id|number|no\.?|#)\s*)?(?:[:#]\s*)?([A-Za-z0-9][\w-]{1,30})\b/gi;
const RULE = /\b(from now on|going forward|from here on|no longer|instead of|always|never|stop (?:using|doing|sending))\b/i;
const RULE_TOPICS: Array<[RegExp, string]> = [
  [/\b(english|french|chinese|spanish|german|japanese|language)\b/i, 'language'],
  [/\b(formal|informal|casual|tone|polite)\b/i, 'tone'],
  [/\b(short|shorter|brief|concise|long|longer|detailed|length)\b/i, 'answer length'],
  [/\b(markdown|bullet|table|json|format)\b/i, 'format'],
  [/\b(usd|eur|euro|dollar|yuan|rmb|currency)\b/i, 'currency'],
  [/\b(time ?zone|utc|gmt)\b/i, 'time zone'],
  [/\b(metric|imperial|units?)\b/i, 'units'],
];

function sentences(text: string): string[] {
  return text.split(/(?<=[.!?])\s+|\n+/).map((s) => s.trim()).filter(Boolean);
}

const clip = (s: string, max: number) => (s.length <= max ? s : `${s.slice(0, max - 1)}…`);

/** Pulls key facts out of one turn: from what the user said and from ids in tool results. Pure and deterministic. */
export function extractKeyFacts(messages: readonly ChatMessage[], turnId: string, at: string, limits = DEFAULT_KEY_FACT_LIMITS): KeyFact[] {
  const facts: KeyFact[] = [];
  const add = (subject: string, value: string, source: KeyFact['source']) =>
    facts.push({ subject: subject.toLowerCase(), value: clip(value.trim(), limits.maxValueChars), turnId, updatedAt: at, source });
  const toolNames = new Map<string, string>();
  for (const m of messages) {
    if (m.role === 'assistant') for (const c of m.tool_calls ?? []) toolNames.set(c.id, c.function.name);
    if (m.role === 'user') {
      for (const sentence of sentences(m.content)) {
        if (DEADLINE.test(sentence)) add('deadline', sentence, 'user');
        if (RULE.test(sentence)) {
          const topic = RULE_TOPICS.find(([re]) => re.test(sentence))?.[1];
          add(`rule: ${topic ?? sentence.toLowerCase().replace(/[^a-z0-9 ]/g, '').split(' ').slice(0, 6).join(' ')}`, sentence, 'user');
        }
        for (const match of sentence.matchAll(TICKET)) add(`ticket ${match[1]!.split('-')[0]}`, match[1]!, 'user');
        for (const match of sentence.matchAll(NAMED_ID)) {
          if (/\d/.test(match[2]!)) add(`${match[1]!.toLowerCase()} id`, match[2]!, 'user');
        }
      }
    }
    if (m.role === 'tool') collectToolIds(m.content, toolNames.get(m.tool_call_id) ?? 'tool', add);
  }
  return facts;
}

function collectToolIds(content: string, toolName: string, add: (subject: string, value: string, source: 'tool') => void): void {
  let parsed: unknown;
  try {
    parsed = JSON.parse(content);
  } catch {
    return;
  }
  const walk = (node: unknown, depth: number) => {
    if (depth > 3 || typeof node !== 'object' || node === null) return;
    for (const [key, value] of Object.entries(node)) {
      if (typeof value === 'string' && /(^|_)id$|Id$/.test(key) && value.length <= 100) add(`${key} (${toolName})`, value, 'tool');
      else walk(value, depth + 1);
    }
  };
  walk(parsed, 0);
}

/** Merges new facts into the pinned ones: same subject replaced by the newer value, oldest dropped past the cap. */
export function mergeKeyFacts(existing: readonly KeyFact[], incoming: readonly KeyFact[], limits = DEFAULT_KEY_FACT_LIMITS): KeyFact[] {
  const bySubject = new Map<string, KeyFact>();
  for (const fact of [...existing, ...incoming]) {
    bySubject.delete(fact.subject);
    bySubject.set(fact.subject, fact);
  }
  return [...bySubject.values()].slice(-limits.maxFacts);
}

export function renderKeyFacts(facts: readonly KeyFact[]): string {
  return facts.map((f) => `- ${f.subject}: ${f.value} (${f.source === 'tool' ? 'from a tool result' : 'said by the user'}, ${f.turnId})`).join('\n');
}
