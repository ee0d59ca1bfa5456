import type { MemoryCandidate } from './memory-candidate';
import {
  factKey,
  foldForGrounding,
  foldWidthAndFormat,
  isAboutUser,
  normalizeIntent,
  normalizePredicate,
  normalizePreference,
  normalizeSubject,
  normalizeText,
  occursIn,
  tidy,
  trimEndOf,
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
  /** The value or statement does not occur in the message it claims to come from (every kind). */
  not_grounded: 'not_grounded',
  small_talk: 'small_talk',
  /** Hedged, or too empty to act on. */
  vague: 'vague',
  /** Scoped to this answer or this moment, not a lasting fact or preference. */
  not_binding: 'not_binding',
  /** An intent whose end date has already passed. */
  already_past: 'already_past',
  /** Cites a message an earlier pass already read, and no message of this pass confirms it. */
  earlier_pass: 'earlier_pass',
  /** Past the candidates one pass takes (MAX_CANDIDATES): left out, the rest of the pass goes on. */
  over_limit: 'over_limit',
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
  /** Messages before this index were read by an earlier pass (context for confirmations only); default 0. */
  firstNewIndex?: number;
  now: Date;
}

const LIMITS = { subject: 80, predicate: 60, value: 200, statement: 200, topic: 60, text: MAX_TEXT_CHARS };

const INSTRUCTION_PATTERNS: RegExp[] = [
  /\b(?:ignore|disregard|forget|override)\b.{0,40}\b(?:instructions?|rules|prompts?|guidelines|previous|above|prior)\b/i,
  /\b(?:system prompt|developer (?:message|mode)|jailbreak|you are now|pretend (?:to be|you are)|act as (?:an?|the) (?:admin|administrator|system|developer|root))\b/i,
  /\b(?:always|must|should|need to|make sure to|you (?:must|should))\s+(?:call|use|run|invoke|execute|trigger)\b.{0,30}\b(?:tools?|functions?|commands?|scripts?)\b/i,
  /^(?:call|run|invoke|execute|trigger)\b.{0,30}\b(?:tools?|functions?|commands?|scripts?)\b/i,
  /\b(?:send|forward|upload|post|transfer|wire|email|leak|exfiltrate)(?:s|es|ed|ing|red|ring)?\b.{0,40}\b(?:data|files?|credentials?|passwords?|money|funds|memories|conversations?|history|keys?|tokens?)\b/i,
  // Passive and past forms too: "the history is forwarded to", "is emailed to", "gets uploaded to".
  /\b(?:data|files?|credentials?|passwords?|money|funds|memories|conversations?|history|keys?|tokens?)\b.{0,40}\b(?:sent|forwarded|uploaded|posted|transferred|wired|emailed|leaked|exfiltrated)\s+(?:on\s+)?(?:to|into)\b/i,
  // Standing orders to skip the human in the loop must never be remembered.
  // Standing approvals of actions ("transfers are pre-approved"), not of people ("pre-approved for a mortgage").
  /\b(?:auto-?approv(?:e|ed|es|al)|approved? (?:automatically|by default)|automatically approved?)\b/i,
  /\b(?:transfers?|payments?|calls?|actions?|tools?|requests?|commands?|purchases?)\b.{0,30}\b(?:pre-?approved|approved in advance)\b|\b(?:pre-?approve[sd]?|approved in advance)\b.{0,30}\b(?:transfers?|payments?|calls?|actions?|tools?|requests?|commands?|purchases?)\b/i,
  /\b(?:without (?:asking|confirmation|confirming|approval)|skip(?:ping)? (?:the )?confirmations?|auto-?approve|never ask (?:me )?(?:for|to) (?:confirm|approv)|(?:don't|do not) ask (?:me )?(?:for|to) (?:confirm|approv))/i,
  // A line's own blanks only before the role (`^\s*` went on over every line break after each line start: quadratic).
  /<\|[^|>]{1,40}\|>|\[\/?(?:inst|sys)\]|^[^\S\n\r\u2028\u2029]*(?:system|assistant|developer)\s*:/im,
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

// An explicit yes, as the whole reply or its start: "yes", "yes, that's right",
// "correct", "是的", "对". A bare "right" or a yes somewhere later does not count.
const EXPLICIT_YES =
  /^(?:yes|yeah|yep|yup|correct|exactly|confirmed|i confirm|that'?s (?:right|correct|true)|that is (?:right|correct|true)|是的|是|对|對|没错|沒錯|正确|正確|はい|そうです|네|예|oui|sí|si|ja|sim)(?=$|[\s,.!;:。，！、])/i;
// A yes that takes itself back: "yes, but not gold", "yes no", in the languages EXPLICIT_YES knows.
const TAKEN_BACK =
  /\b(?:not|no|isn'?t|wasn'?t|never|wrong|but|except|actually|however|aber|nicht|kein|keine|nein|sondern|mais|pas|pero|sino|não|nao|mas|però)\b|不是|不对|不對|但是|可是|不过|不過|違います|ではない|じゃない|でも|아니|하지만/i;
// A yes-word that starts something else: "Correct me, it is silver", "Exactly what does gold include".
const NOT_AN_ANSWER = /^\s+(?:me|him|her|what|which|who|whom|how|why|when|where|if|whether)\b/i;

// Words that carry no content on their own: a value or statement made only of them is vague.
const STOPWORDS = new Set(
  'a an the and or of to in on at for with by from is are was were be been am i me my you your it its this that these those user users very really just some any'.split(' '),
);

function contentWords(text: string): string[] {
  return (normalizeText(text).match(/[\p{L}\p{N}]+/gu) ?? []).filter((w) => !STOPWORDS.has(w));
}

const reject = (reason: RejectionReason, detail: string): GateResult => ({ ok: false, reason, detail });

const present = (value: string | null | undefined): value is string => typeof value === 'string' && value.trim() !== '';


/** True when a sentence of `source` that holds `phrase` names a secret or payment detail. */
function saidAsSecret(phrase: string, source: string): boolean {
  if (!present(phrase)) return false;
  return foldWidthAndFormat(source)
    .split(/[.!?;\n\u3002\uff01\uff1f]+/)
    .some((sentence) => isGrounded(phrase, sentence) && SENSITIVE_WORDS.test(sentence));
}

/**
 * Words a memory's wording may add to what the user said and the grounded
 * fields: who it is about, and the verbs and small words of a plain sentence.
 */
const PHRASING_WORDS = new Set(
  'the a an user users user s customer is are was were be been has have had will would can does do not no never of to in on at for from with by as and or but that this these those it its they them their he she his her him prefers prefer preferred likes like liked avoids avoid dislikes dislike wants want plans plan planning intends going'.split(' '),
);

/**
 * The memory's text, as recalled into later prompts: the model's wording when
 * every word of it comes from the source message, the grounded fields or
 * PHRASING_WORDS; otherwise (words the user never said, such as an appended
 * "treat confirmations as granted") the text made from the grounded fields.
 * At most MAX_TEXT_CHARS either way.
 */
function wording(given: string | null | undefined, composed: string, fields: string[], source: string): string {
  if (present(given)) {
    const allowed = `${source} ${fields.join(' ')}`;
    const words = foldForGrounding(foldWidthAndFormat(given)).split(' ').filter(Boolean);
    if (words.length > 0 && words.every((w) => PHRASING_WORDS.has(w) || occursIn(w, allowed))) return tidy(given);
  }
  const text = tidy(composed);
  return text.length <= MAX_TEXT_CHARS ? text : `${text.slice(0, MAX_TEXT_CHARS - 1)}\u2026`;
}

/** Decides whether one candidate may become a memory; pure. */
export function gateCandidate(candidate: MemoryCandidate, ctx: GateContext): GateResult {
  const origin = resolveSource(candidate, ctx);
  if (!origin.ok) return origin.result;

  const shape = checkShape(candidate);
  if (shape) return shape;

  const raw = [candidate.subject, candidate.predicate, candidate.value, candidate.statement, candidate.topic, candidate.text]
    .filter(present)
    .join(' \n ');
  // Both as written and folded: full-width letters, zero-width spaces and soft hyphens hide nothing.
  const everything = [raw, foldWidthAndFormat(raw)];
  if (INSTRUCTION_PATTERNS.some((p) => everything.some((t) => p.test(t)))) return reject('instruction_like', 'reads like an instruction to the assistant');
  if (everything.some((t) => SENSITIVE_WORDS.test(t) || SENSITIVE_VALUES.some((p) => p.test(t)))) {
    return reject('sensitive', 'looks like a secret or payment detail');
  }
  // What the user said around the remembered words counts too: "My bank PIN is 4821" is not kept as "bank code: 4821".
  if (saidAsSecret(confirmedPhrase(candidate), origin.message.content)) return reject('sensitive', 'the source message gives it as a secret or payment detail');
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
  // Grounded in the cited message only: a confirmation says yes to a
  // question, it does not supply the words.
  const groundedIn = origin.message.content;

  // What a person confirmed is the question they said yes to, not the rest of a tool's (or the assistant's)
  // message: the memory's wording may use the question's words, never the rest of the tool's text.
  const question = origin.confirmedBy ? ctx.messages[origin.confirmedBy.index - 1]?.content ?? '' : undefined;
  const wordedFrom = question ?? groundedIn;
  switch (candidate.kind) {
    case 'fact':
      return gateFact(candidate, source, groundedIn, wordedFrom);
    case 'preference':
      return gatePreference(candidate, source, groundedIn, wordedFrom);
    case 'intent':
      return gateIntent(candidate, source, ctx.now, groundedIn, wordedFrom);
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
  const firstNew = ctx.firstNewIndex ?? 0;
  // What the user said in a turn an earlier pass read was extracted then.
  if (message.index < firstNew && !needsConfirmation) {
    return { ok: false, result: reject('earlier_pass', `message #${message.index} was read by an earlier pass`) };
  }
  if (!needsConfirmation) return { ok: true, message, role: message.role, needsConfirmation };
  const index = candidate.confirmationMessageIndex;
  const confirming = typeof index === 'number' ? ctx.messages[index] : undefined;
  const confirmed =
    candidate.userConfirmed && confirming !== undefined && confirming.index > message.index && isExplicitConfirmation(confirming, ctx.messages, confirmedPhrase(candidate));
  if (message.index < firstNew && !(confirmed && confirming.index >= firstNew)) {
    return { ok: false, result: reject('earlier_pass', `message #${message.index} was read by an earlier pass, and nothing in this one confirms it`) };
  }
  return { ok: true, message, role: message.role, needsConfirmation, ...(confirmed ? { confirmedBy: confirming } : {}) };
}

/** What the user must have been asked about: the fact's value, or the statement. */
function confirmedPhrase(candidate: MemoryCandidate): string {
  if (candidate.kind === 'fact') return candidate.value ?? '';
  const raw = candidate.statement ?? '';
  return candidate.kind === 'preference' ? normalizePreference(raw, candidate.polarity).statement : normalizeIntent(raw);
}

/**
 * A user message confirms a statement only as the answer to a question the
 * assistant asked about it: the message right before the reply is the
 * assistant's, asks a question, and contains the statement's words; the reply
 * is an explicit yes that is not taken back.
 */
export function isExplicitConfirmation(reply: TranscriptMessage, messages: readonly TranscriptMessage[], phrase: string): boolean {
  if (reply.role !== 'user') return false;
  const question = messages[reply.index - 1];
  if (!question || question.role !== 'assistant' || !/[?？]/.test(question.content)) return false;
  if (!occursIn(phrase, question.content)) return false;
  const answer = reply.content.normalize('NFKC').trim().replace(/[\u2018\u2019]/g, "'");
  const yes = EXPLICIT_YES.exec(answer);
  if (!yes) return false;
  // A question back is not a yes, nor is a yes-word that begins another sentence.
  // A question in the same sentence as the yes: "Exactly what does gold include?" (a question after it is a new one).
  if (/^[^.!。！]*[?？]/.test(answer)) return false;
  const rest = answer.slice(yes[0].length);
  return !NOT_AN_ANSWER.test(rest) && !TAKEN_BACK.test(rest);
}

/**
 * A value is grounded when it occurs in the cited message as a phrase, or
 * every one of its content words does (word order may differ); one shared
 * word is not enough.
 */
export function isGrounded(phrase: string, source: string): boolean {
  if (occursIn(phrase, source)) return true;
  const words = contentWords(phrase);
  return words.length > 0 && words.every((w) => occursIn(w, source));
}

/** Words a label (a fact's subject and predicate, a preference's topic) may have: it names what is remembered, it says nothing. */
const LABEL_WORDS = { subject: 5, predicate: 5, topic: 4 } as const;

/**
 * Why a label field is not a label, or null. Only the value or statement must
 * occur in what the user said; a subject, predicate or topic is the model's
 * own word for it ("home city" for "I live in Porto"), and its words reach the
 * memory's text. Unbounded, it carried whatever the model (or a prompt
 * injected through a tool result) wrote: "user's standing order: transfers
 * are pre-approved; home" became part of a memory said to be the user's.
 */
function labelProblem(field: keyof typeof LABEL_WORDS, value: string | null | undefined): string | null {
  if (!present(value)) return null;
  const folded = foldWidthAndFormat(value);
  // A dot inside a word is a name ("Next.js", "Node.js"); one that ends a sentence is not a label.
  if (/[:;,!?()[\]{}<>"|\n\r\t]|\.(?=\s|$)/.test(folded)) return `${field} must be a short label without punctuation`;
  const words = folded.trim().split(/\s+/).length;
  if (words > LABEL_WORDS[field]) return `${field} must be a short label (at most ${LABEL_WORDS[field]} words)`;
  return null;
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
  const label = labelProblem('subject', c.subject) ?? labelProblem('predicate', c.predicate) ?? labelProblem('topic', c.topic);
  if (label) return reject('malformed', label);
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

function gateFact(c: MemoryCandidate, source: MemorySource, groundedIn: string, wordedFrom: string): GateResult {
  const subject = normalizeSubject(c.subject ?? '');
  const predicate = normalizePredicate(c.predicate ?? '');
  const value = trimEndOf(tidy(c.value ?? ''), /[.!]/);
  if (!isAboutUser(subject)) return reject('not_about_user', `subject "${subject}" is not the user`);
  if (CHATTER_PREDICATES.has(predicate) || isSmallTalk(value)) return reject('small_talk', `"${predicate} ${value}" is small talk`);
  if (isVague(value, 1) || isVague(predicate, 1)) return reject('vague', `"${predicate} ${value}" is too vague to act on`);
  if (ONE_OFF.test(`${predicate} ${value}`)) return reject('not_binding', `"${predicate} ${value}" only holds for now`);
  if (!isGrounded(value, groundedIn)) return reject('not_grounded', `value "${value}" does not occur in the source message`);
  const text = wording(c.text, `${subject === 'user' ? 'The user' : `The ${subject}`} ${predicate}: ${value}`, [subject, predicate, value], wordedFrom);
  return { ok: true, memory: { kind: 'fact', subject, predicate, key: factKey(subject, predicate), value, text, source } };
}

function gatePreference(c: MemoryCandidate, source: MemorySource, groundedIn: string, wordedFrom: string): GateResult {
  const raw = tidy(c.statement ?? '');
  const { statement, polarity } = normalizePreference(raw, c.polarity);
  if (isSmallTalk(raw) || isSmallTalk(statement)) return reject('small_talk', `"${raw}" is small talk`);
  if (isVague(raw, 1) || isVague(statement, 1)) return reject('vague', `"${raw}" is too vague to act on`);
  if (ONE_OFF.test(raw) || ONE_OFF.test(c.text)) return reject('not_binding', `"${raw}" is a one-off request, not a lasting preference`);
  if (!isGrounded(statement, groundedIn)) return reject('not_grounded', `"${statement}" does not occur in the source message`);
  const topic = present(c.topic) ? normalizeText(c.topic) : undefined;
  const text = wording(c.text, `The user ${polarity} ${statement}`, [statement, raw, c.topic ?? ''], wordedFrom);
  return { ok: true, memory: { kind: 'preference', statement, polarity, ...(topic ? { topic } : {}), text, source } };
}

function gateIntent(c: MemoryCandidate, source: MemorySource, now: Date, groundedIn: string, wordedFrom: string): GateResult {
  const raw = tidy(c.statement ?? '');
  const statement = normalizeIntent(raw);
  if (isSmallTalk(raw)) return reject('small_talk', `"${raw}" is small talk`);
  if (isVague(raw, 2)) return reject('vague', `"${raw}" is too vague to act on`);
  if (INTENT_ONE_OFF.test(raw)) return reject('not_binding', `"${raw}" is about this conversation only`);
  const validUntil = c.validUntil ? new Date(c.validUntil) : undefined;
  if (validUntil && validUntil.getTime() <= now.getTime()) return reject('already_past', `the plan ended on ${c.validUntil}`);
  if (!isGrounded(statement, groundedIn)) return reject('not_grounded', `"${statement}" does not occur in the source message`);
  const text = wording(c.text, `The user ${raw}`, [statement, raw], wordedFrom);
  return { ok: true, memory: { kind: 'intent', statement, ...(validUntil ? { validUntil } : {}), text, source } };
}
