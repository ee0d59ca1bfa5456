import type { MemoryCandidate } from './memory-candidate';
import {
  factKey,
  isAboutUser,
  normalizeIntent,
  normalizePredicate,
  normalizePreference,
  normalizeSubject,
  normalizeText,
  tidy,
} from './memory-normalize';
import { MAX_TEXT_CHARS, type MemorySource, type PreferencePolarity } from './memory-types';
import type { TranscriptMessage } from './transcript';

/**
 * The quality gate: only well-formed subject-predicate-object facts about the
 * user, binding preferences and cross-session intents become long-term
 * memories. Everything else is rejected with a reason, and the reasons are
 * counted, so a noisy extraction model shows up in the numbers.
 */

export const RejectionReason = {
  /** A field the kind needs is missing, or the source message does not exist. */
  malformed: 'malformed',
  too_long: 'too_long',
  /** Reads like an instruction to the assistant or a prompt injection. */
  instruction_like: 'instruction_like',
  /** Passwords, keys, card numbers: never stored. */
  sensitive: 'sensitive',
  /** From a tool or MCP result, and the user did not confirm it. */
  tool_sourced_unconfirmed: 'tool_sourced_unconfirmed',
  /** The assistant said it, the user did not (and did not confirm it). */
  not_stated_by_user: 'not_stated_by_user',
  /** A fact whose subject is not the user. */
  not_about_user: 'not_about_user',
  /** A fact whose value does not occur in the message it claims to come from. */
  not_grounded: 'not_grounded',
  small_talk: 'small_talk',
  /** Hedged, or too empty to act on. */
  vague: 'vague',
  /** Scoped to this answer or this moment, not a lasting fact or preference. */
  not_binding: 'not_binding',
  /** An intent whose end date has already passed. */
  already_past: 'already_past',
} as const;
export type RejectionReason = (typeof RejectionReason)[keyof typeof RejectionReason];

export type RejectionCounts = Record<RejectionReason, number>;

export function emptyRejectionCounts(): RejectionCounts {
  const counts = {} as RejectionCounts;
  for (const reason of Object.values(RejectionReason)) counts[reason] = 0;
  return counts;
}

/** A candidate that passed, normalized and tied to the message it came from. */
export type GatedMemory =
  | { kind: 'fact'; subject: string; predicate: string; key: string; value: string; text: string; source: MemorySource }
  | { kind: 'preference'; statement: string; polarity: PreferencePolarity; topic?: string; text: string; source: MemorySource }
  | { kind: 'intent'; statement: string; validUntil?: Date; text: string; source: MemorySource };

export type GateResult = { ok: true; memory: GatedMemory } | { ok: false; reason: RejectionReason; detail: string };

export interface GateContext {
  sessionId: string;
  /** The numbered transcript the candidate's indexes point into. */
  messages: TranscriptMessage[];
  now: Date;
}

const LIMITS = { subject: 80, predicate: 60, value: 200, statement: 200, topic: 60, text: MAX_TEXT_CHARS };

const INSTRUCTION_PATTERNS: RegExp[] = [
  /\b(?:ignore|disregard|forget|override)\b.{0,40}\b(?:instructions?|rules|prompts?|guidelines|previous|above|prior)\b/i,
  /\b(?:system prompt|developer (?:message|mode)|jailbreak|you are now|pretend (?:to be|you are)|act as (?:an?|the) (?:admin|administrator|system|developer|root))\b/i,
  /\b(?:always|must|should|need to|make sure to|you (?:must|should))\s+(?:call|use|run|invoke|execute|trigger)\b.{0,30}\b(?:tools?|functions?|commands?|scripts?)\b/i,
  /^(?:call|run|invoke|execute|trigger)\b.{0,30}\b(?:tools?|functions?|commands?|scripts?)\b/i,
  /\b(?:send|forward|upload|post|transfer|wire|email|leak|exfiltrate)\b.{0,40}\b(?:data|files?|credentials?|passwords?|money|funds|memories|conversations?|history|keys?|tokens?)\b/i,
  // Standing orders to skip the human in the loop must never be remembered.
  /\b(?:without (?:asking|confirmation|confirming|approval)|skip(?:ping)? (?:the )?confirmations?|auto-?approve|never ask (?:me )?(?:for|to) (?:confirm|approv)|(?:don't|do not) ask (?:me )?(?:for|to) (?:confirm|approv))/i,
  /<\|[^|>]{1,40}\|>|\[\/?(?:inst|sys)\]|^\s*(?:system|assistant|developer)\s*:/im,
  /\b(?:rm -rf|sudo\s|curl\s|wget\s|powershell|base64 -d|eval\()/i,
];

const SENSITIVE_WORDS =
  /\b(?:passwords?|passcodes?|passphrases?|pin(?: code)?|api ?keys?|secret keys?|access tokens?|private keys?|credit cards?|card numbers?|cvv|ssn|social security(?: number)?|iban|bank account numbers?)\b/i;
const SENSITIVE_VALUES = [/\bsk-[A-Za-z0-9_-]{16,}/, /\b(?:\d[ -]?){13,19}\b/, /\b[A-Za-z0-9+/_-]{32,}\b/];

const GREETING =
  /^(?:hi|hello|hey|yo|thanks?|thank you|thx|ok(?:ay)?|cool|nice|great|awesome|lol|haha|bye|goodbye|good (?:morning|afternoon|evening|night)|cheers|you'?re welcome|no problem|sure|yes|no|yep|nope)\b/i;
const CHATTER =
  /\b(?:says? (?:hi|hello|thanks?)|greeted|thanked|how are you|is (?:doing )?(?:fine|good|well|ok(?:ay)?)(?: today)?$|(?:the|nice|bad|lovely) weather|feels? (?:fine|good|bored|tired|ok(?:ay)?|great))\b/i;
const CHATTER_PREDICATES = new Set(['said', 'says', 'greeted', 'thanked', 'asked', 'asked about', 'mood', 'feels', 'is feeling', 'feeling', 'greeting']);

const HEDGES = /\b(?:maybe|perhaps|possibly|probably|might|kind of|sort of|kinda|i guess|i think|not sure|somewhat|or something|whatever|etc)\b/i;
const EMPTY_VALUES = /^(?:it|that|this|them|those|these|something|stuff|things|anything|everything|nothing|some|a thing|the thing|unknown|n\/a|none|null)$/i;

const ONE_OFF =
  /\b(?:this time|for now|just (?:this|once|today|now)|right now|at the moment|today|tonight|this (?:answer|reply|question|message|conversation|chat)|for this (?:one|answer|reply|question))\b/i;
const INTENT_ONE_OFF = /\b(?:right now|this (?:answer|reply|question|message)|in this (?:chat|conversation))\b/i;

const AFFIRMATION =
  /\b(?:yes|yeah|yep|yup|correct|right|exactly|true|confirm(?:ed)?|indeed|that'?s (?:me|it|right|correct|true)|remember (?:that|it|this)|save (?:it|that|this)|keep (?:it|that|this))\b/i;

// Words that carry no content on their own: a value or statement made only of them is vague.
const STOPWORDS = new Set(
  'a an the and or of to in on at for with by from is are was were be been am i me my you your it its this that these those user users very really just some any'.split(' '),
);

function contentWords(text: string): string[] {
  return (normalizeText(text).match(/[\p{L}\p{N}]+/gu) ?? []).filter((w) => !STOPWORDS.has(w));
}

const reject = (reason: RejectionReason, detail: string): GateResult => ({ ok: false, reason, detail });

const present = (value: string | null | undefined): value is string => typeof value === 'string' && value.trim() !== '';

/** Decides whether one candidate may become a memory; pure. */
export function gateCandidate(candidate: MemoryCandidate, ctx: GateContext): GateResult {
  const origin = resolveSource(candidate, ctx);
  if (!origin.ok) return origin.result;

  const shape = checkShape(candidate);
  if (shape) return shape;

  const everything = [candidate.subject, candidate.predicate, candidate.value, candidate.statement, candidate.topic, candidate.text]
    .filter(present)
    .join(' \n ');
  if (INSTRUCTION_PATTERNS.some((p) => p.test(everything))) return reject('instruction_like', 'reads like an instruction to the assistant');
  if (SENSITIVE_WORDS.test(everything) || SENSITIVE_VALUES.some((p) => p.test(everything))) {
    return reject('sensitive', 'looks like a secret or payment detail');
  }
  if (origin.needsConfirmation && !origin.confirmedBy) {
    return origin.role === 'assistant'
      ? reject('not_stated_by_user', `message #${candidate.sourceMessageIndex} is the assistant's, and no user message confirms it`)
      : reject('tool_sourced_unconfirmed', `message #${candidate.sourceMessageIndex} is tool output, and no user message confirms it`);
  }

  const source: MemorySource = {
    sessionId: ctx.sessionId,
    turnId: origin.message.turnId,
    messageIndex: origin.message.indexInTurn,
    role: origin.message.role,
    origin: origin.needsConfirmation ? 'tool' : 'user',
    ...(origin.message.toolCallId ? { toolCallId: origin.message.toolCallId } : {}),
    ...(origin.confirmedBy ? { confirmedBy: { turnId: origin.confirmedBy.turnId, messageIndex: origin.confirmedBy.indexInTurn } } : {}),
  };
  const groundedIn = [origin.message.content, origin.confirmedBy?.content ?? ''].join('\n');

  switch (candidate.kind) {
    case 'fact':
      return gateFact(candidate, source, groundedIn);
    case 'preference':
      return gatePreference(candidate, source);
    case 'intent':
      return gateIntent(candidate, source, ctx.now);
  }
}

type SourceCheck =
  | { ok: false; result: GateResult }
  | { ok: true; message: TranscriptMessage; role: TranscriptMessage['role']; needsConfirmation: boolean; confirmedBy?: TranscriptMessage };

function resolveSource(candidate: MemoryCandidate, ctx: GateContext): SourceCheck {
  const message = ctx.messages[candidate.sourceMessageIndex];
  if (!message) return { ok: false, result: reject('malformed', `sourceMessageIndex ${candidate.sourceMessageIndex} is not a message of the transcript`) };
  // The model's own flag can only make a candidate less trusted, never more:
  // the role of the message it points at is checked here.
  const needsConfirmation = candidate.fromTool || message.role !== 'user';
  if (!needsConfirmation) return { ok: true, message, role: message.role, needsConfirmation };
  const index = candidate.confirmationMessageIndex;
  const confirming = typeof index === 'number' ? ctx.messages[index] : undefined;
  const confirmed =
    candidate.userConfirmed &&
    confirming !== undefined &&
    confirming.role === 'user' &&
    confirming.index > message.index &&
    (AFFIRMATION.test(confirming.content) || mentions(confirming.content, candidate.value ?? candidate.statement ?? ''));
  return { ok: true, message, role: message.role, needsConfirmation, ...(confirmed ? { confirmedBy: confirming } : {}) };
}

function mentions(haystack: string, needle: string): boolean {
  const words = contentWords(needle);
  const hay = new Set(contentWords(haystack));
  return words.length > 0 && words.every((w) => hay.has(w));
}

function checkShape(c: MemoryCandidate): GateResult | null {
  const missing: string[] = [];
  if (c.kind === 'fact') {
    if (!present(c.subject)) missing.push('subject');
    if (!present(c.predicate)) missing.push('predicate');
    if (!present(c.value)) missing.push('value');
  } else if (!present(c.statement)) {
    missing.push('statement');
  }
  if (missing.length) return reject('malformed', `a ${c.kind} needs ${missing.join(', ')}`);
  if (c.validUntil && Number.isNaN(Date.parse(c.validUntil))) return reject('malformed', `validUntil "${c.validUntil}" is not a date`);
  const fields = { subject: c.subject, predicate: c.predicate, value: c.value, statement: c.statement, topic: c.topic, text: c.text } as const;
  for (const [field, value] of Object.entries(fields)) {
    const limit = LIMITS[field as keyof typeof LIMITS];
    if (present(value) && tidy(value).length > limit) return reject('too_long', `${field} is longer than ${limit} characters`);
  }
  return null;
}

function isSmallTalk(content: string): boolean {
  return (GREETING.test(content) && contentWords(content).length <= 4) || CHATTER.test(content);
}

function isVague(content: string, minContentWords: number): boolean {
  return HEDGES.test(content) || EMPTY_VALUES.test(normalizeText(content)) || contentWords(content).length < minContentWords;
}

function gateFact(c: MemoryCandidate, source: MemorySource, groundedIn: string): GateResult {
  const subject = normalizeSubject(c.subject ?? '');
  const predicate = normalizePredicate(c.predicate ?? '');
  const value = tidy(c.value ?? '').replace(/[.!]+$/, '');
  if (!isAboutUser(subject)) return reject('not_about_user', `subject "${subject}" is not the user`);
  if (CHATTER_PREDICATES.has(predicate) || isSmallTalk(value)) return reject('small_talk', `"${predicate} ${value}" is small talk`);
  if (isVague(value, 1) || isVague(predicate, 1)) return reject('vague', `"${predicate} ${value}" is too vague to act on`);
  if (ONE_OFF.test(`${predicate} ${value}`)) return reject('not_binding', `"${predicate} ${value}" only holds for now`);
  const sourceWords = new Set(contentWords(groundedIn));
  if (!contentWords(value).some((w) => sourceWords.has(w))) {
    return reject('not_grounded', `value "${value}" does not occur in the source message`);
  }
  const text = present(c.text) ? tidy(c.text) : `${subject === 'user' ? 'The user' : `The ${subject}`} ${predicate}: ${value}`;
  return { ok: true, memory: { kind: 'fact', subject, predicate, key: factKey(subject, predicate), value, text, source } };
}

function gatePreference(c: MemoryCandidate, source: MemorySource): GateResult {
  const raw = tidy(c.statement ?? '');
  const { statement, polarity } = normalizePreference(raw, c.polarity);
  if (isSmallTalk(raw) || isSmallTalk(statement)) return reject('small_talk', `"${raw}" is small talk`);
  if (isVague(raw, 1) || isVague(statement, 1)) return reject('vague', `"${raw}" is too vague to act on`);
  if (ONE_OFF.test(raw) || ONE_OFF.test(c.text)) return reject('not_binding', `"${raw}" is a one-off request, not a lasting preference`);
  const topic = present(c.topic) ? normalizeText(c.topic) : undefined;
  const text = present(c.text) ? tidy(c.text) : `The user ${polarity} ${statement}`;
  return { ok: true, memory: { kind: 'preference', statement, polarity, ...(topic ? { topic } : {}), text, source } };
}

function gateIntent(c: MemoryCandidate, source: MemorySource, now: Date): GateResult {
  const raw = tidy(c.statement ?? '');
  const statement = normalizeIntent(raw);
  if (isSmallTalk(raw)) return reject('small_talk', `"${raw}" is small talk`);
  if (isVague(raw, 2)) return reject('vague', `"${raw}" is too vague to act on`);
  if (INTENT_ONE_OFF.test(raw)) return reject('not_binding', `"${raw}" is about this conversation only`);
  const validUntil = c.validUntil ? new Date(c.validUntil) : undefined;
  if (validUntil && validUntil.getTime() <= now.getTime()) return reject('already_past', `the plan ended on ${c.validUntil}`);
  const text = present(c.text) ? tidy(c.text) : `The user ${raw}`;
  return { ok: true, memory: { kind: 'intent', statement, ...(validUntil ? { validUntil } : {}), text, source } };
}
