import type { PreferencePolarity } from './memory-types';

/**
 * Normalization decides which statements are "the same": the same fact key
 * overwrites, the same preference reinforces. It is pure string work, kept
 * conservative so that different things never collapse into one.
 */

/**
 * NFKC (full width to half width), without format characters (zero-width
 * spaces and joiners, soft hyphens): "long\u200Banswers" is "longanswers".
 * The first step of every fold here, so identity, grounding and the gate's
 * checks read text alike.
 */
export function foldWidthAndFormat(text: string): string {
  return text.normalize('NFKC').replace(/\p{Cf}/gu, '');
}

/** The characters normalizeText takes off both ends. */
const TRIMMED = /[\s"'`.,;:!?()[\]-]/;

/** `text` without the characters matching `chars` (one character each) at its end, in one pass. */
export function trimEndOf(text: string, chars: RegExp): string {
  let end = text.length;
  while (end > 0 && chars.test(text[end - 1]!)) end--;
  return text.slice(0, end);
}

/** Lowercase, straight quotes, single spaces, no surrounding punctuation. */
export function normalizeText(text: string): string {
  const folded = foldWidthAndFormat(text)
    .toLowerCase()
    .replace(/[\u2018\u2019\u02bc]/g, "'")
    .replace(/[_\s]+/g, ' ')
    .replace(/^[\s"'`.,;:!?()[\]-]+/, '');
  // The end by hand: `[...]+$` went back over a long run of these from every place in it (quadratic).
  return trimEndOf(folded, TRIMMED).trim();
}

const USER_WORDS = /^(?:the user|user|i|me|myself|the customer)$/;
const USER_POSSESSIVE = /^(?:the user's|user's|the users'|my|the user|user)\s+(.+)$/;

/** "I", "me", "the user" -> "user"; "my dog", "the user's dog" -> "user's dog"; anything else unchanged (and not about the user). */
export function normalizeSubject(subject: string): string {
  const s = normalizeText(subject);
  if (USER_WORDS.test(s)) return 'user';
  const possessive = USER_POSSESSIVE.exec(s);
  if (possessive?.[1]) return `user's ${possessive[1]}`;
  return s;
}

export function isAboutUser(normalizedSubject: string): boolean {
  return normalizedSubject === 'user' || normalizedSubject.startsWith("user's ");
}

// A few spellings models use interchangeably for the same relation; more
// would risk merging relations that differ.
const PREDICATE_SYNONYMS: Record<string, string> = {
  'is named': 'name',
  'is called': 'name',
  'name is': 'name',
  'has name': 'name',
  named: 'name',
  called: 'name',
  'full name': 'name',
  'lives in': 'lives in',
  'resides in': 'lives in',
  'is based in': 'lives in',
  'based in': 'lives in',
  'home city': 'lives in',
  location: 'lives in',
  'works at': 'works at',
  'works for': 'works at',
  'is employed by': 'works at',
  employer: 'works at',
  'job title': 'job',
  'works as': 'job',
  occupation: 'job',
  role: 'job',
  'time zone': 'timezone',
  'is in time zone': 'timezone',
};

export function normalizePredicate(predicate: string): string {
  const p = normalizeText(predicate);
  return PREDICATE_SYNONYMS[p] ?? p;
}

export function factKey(subject: string, predicate: string): string {
  return `${subject}|${predicate}`;
}

const PREFERENCE_VERBS: Array<[RegExp, PreferencePolarity]> = [
  [/^(?:does not|doesn't|do not|don't|never) (?:like|want|enjoy|use)s? /, 'avoids'],
  [/^(?:dislikes?|hates?|avoids?|is against|prefers? not to have|prefers? no|would rather not have) /, 'avoids'],
  [/^(?:prefers?|likes?|loves?|enjoys?|wants?|would like|would rather have|favou?rs?) /, 'prefers'],
];

/**
 * Splits "the user prefers concise answers" into the object ("concise
 * answers") and the polarity the verb implies; the verb wins over a polarity
 * field that disagrees with it.
 */
export function normalizePreference(statement: string, polarity?: PreferencePolarity | null): { statement: string; polarity: PreferencePolarity } {
  let s = normalizeText(statement).replace(/^(?:the user|user|i|they)\s+/, '');
  let found: PreferencePolarity | undefined;
  for (const [verb, verbPolarity] of PREFERENCE_VERBS) {
    const match = verb.exec(s);
    if (match) {
      s = s.slice(match[0].length);
      found = verbPolarity;
      break;
    }
  }
  return { statement: normalizeText(s), polarity: found ?? polarity ?? 'prefers' };
}

export function normalizeIntent(statement: string): string {
  return normalizeText(statement)
    .replace(/^(?:the user|user|i'm|i)\s+/, '')
    .replace(/^(?:is|am|will|plans? to|is planning to|wants to)\s+/, '');
}

/** Values are compared without case and surrounding punctuation, shown as given. */
export function sameValue(a: string, b: string): boolean {
  return normalizeText(a) === normalizeText(b);
}

/** Collapses whitespace and trims; keeps case, for text shown to people and the model. */
export function tidy(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

// Scripts written without spaces between words: a value there is matched as a
// run of characters, not as whole words.
const UNSPACED = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\p{Script=Thai}]/u;

/**
 * Text folded for grounding checks: NFKC (full width to half width),
 * lowercase, apostrophes dropped, every other run of punctuation, symbols and
 * whitespace one space.
 */
export function foldForGrounding(text: string): string {
  // Format characters dropped, not read as a space: as normalizeText does, so what is grounded and what it is stored as agree.
  return foldWidthAndFormat(text)
    .toLowerCase()
    .replace(/['\u2018\u2019\u02bc]/g, '')
    .replace(/[^\p{L}\p{N}\p{M}]+/gu, ' ')
    .trim();
}

/**
 * True when `phrase` occurs in `source` as words, after folding both: "gold"
 * occurs in "Tier: GOLD." but not in "golden", "CityZq0x" not in "CityZq3x".
 * A phrase in a script without spaces (Chinese, Japanese, Thai) may sit inside
 * a longer run of characters.
 */
export function occursIn(phrase: string, source: string): boolean {
  const p = foldForGrounding(phrase);
  const s = foldForGrounding(source);
  if (p === '') return false;
  for (let at = s.indexOf(p); at !== -1; at = s.indexOf(p, at + 1)) {
    const before = s[at - 1];
    const after = s[at + p.length];
    const startOk = before === undefined || before === ' ' || UNSPACED.test(p[0] ?? '') || UNSPACED.test(before);
    const endOk = after === undefined || after === ' ' || UNSPACED.test(p[p.length - 1] ?? '') || UNSPACED.test(after);
    if (startOk && endOk) return true;
  }
  return false;
}
