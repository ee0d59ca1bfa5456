/**
 * Rewording of an English memory into the first person, for embedding only.
 *
 * Memories are stored in the third person ("The user's dog is called
 * Biscuit.") because they are shown to the model as notes about the user;
 * people ask in the first person ("What's my dog called?"). Sentence
 * embedding models score "my dog" closer to "my dog" than to "the user's
 * dog", so the English local models embed a memory as "My dog is called
 * Biscuit." (measured on the labelled recall set: docs/memory.md). The stored
 * text never changes, and queries are never reworded.
 *
 * Deterministic and rule-based: "the user's" / "user's" -> "my", "the user"
 * -> "I" where it begins a clause (with the verb after it agreeing: "is" ->
 * "am", "has" -> "have", "lives" -> "live") and "me" elsewhere. Anything it
 * does not recognise is left as it is.
 */

const WORD = /[\p{L}\p{N}]+(?:['’][\p{L}]+)*/gu;

/** A word before "the user" that makes it the subject of a new clause ("Marco and the user are ..."). */
const CLAUSE_OPENERS = new Set([
  'and', 'but', 'or', 'nor', 'so', 'yet', 'that', 'because', 'when', 'whenever', 'while', 'whilst', 'since', 'if', 'unless',
  'although', 'though', 'until', 'till', 'after', 'before', 'once', 'where', 'wherever', 'as', 'whether', 'then',
]);

/** Words after "the user" that make it part of a noun ("the user interface"), not the person. */
const COMPOUND_NOUNS = new Set([
  'interface', 'interfaces', 'experience', 'account', 'accounts', 'manual', 'manuals', 'guide', 'guides', 'base', 'story', 'stories',
  'research', 'group', 'groups', 'id', 'ids', 'agent', 'agents', 'input', 'profile', 'profiles', 'settings', 'testing', 'tests',
  'feedback', 'data', 'name', 'names', 'journey', 'journeys', 'flow', 'flows', 'role', 'roles', 'permissions', 'session', 'sessions',
]);

/** Words before a bare "user's" that make it someone's, not the user's ("a user's guide"). */
const DETERMINERS = new Set(['a', 'an', 'each', 'every', 'any', 'another', 'one', 'this', 'that', 'other', 'some', 'no', 'the']);

/** Adverbs that may stand between the subject and its verb ("The user also keeps ..."). */
const ADVERBS = new Set([
  'also', 'often', 'never', 'always', 'still', 'sometimes', 'now', 'already', 'just', 'even', 'rarely', 'usually', 'only',
  'mostly', 'really', 'mainly', 'currently', 'recently', 'generally', 'strictly', 'regularly', 'occasionally', 'seldom',
  'nowadays', 'actually', 'normally', 'typically', 'certainly', 'definitely', 'frequently', 'barely', 'hardly', 'finally',
]);

/** Third-person verb forms with irregular first-person ones; the rest follow `firstPersonVerb`. */
const IRREGULAR_VERBS: Record<string, string> = {
  is: 'am',
  "isn't": 'am not',
  has: 'have',
  "hasn't": "haven't",
  does: 'do',
  "doesn't": "don't",
  was: 'was',
  "wasn't": "wasn't",
  goes: 'go',
  focuses: 'focus',
};

interface Word {
  text: string;
  lower: string;
  start: number;
  end: number;
}

/** "lives" -> "live", "studies" -> "study", "watches" -> "watch"; undefined when the word is not a third-person -s form. */
export function firstPersonVerb(word: string): string | undefined {
  const w = word.replace(/’/g, "'").toLowerCase();
  const irregular = IRREGULAR_VERBS[w];
  if (irregular !== undefined) return irregular;
  if (!/^[a-z]{3,}s$/.test(w) || /(?:ss|us|is)$/.test(w) || ADVERBS.has(w)) return undefined;
  if (w.length > 4 && /[^aeiou]ies$/.test(w)) return `${w.slice(0, -3)}y`;
  if (/(?:sses|shes|ches|xes|zzes|oes)$/.test(w)) return w.slice(0, -2);
  return w.slice(0, -1);
}

function isPossessiveUser(lower: string): boolean {
  return lower === "user's" || lower === 'user’s';
}

/** The memory's text as the user would say it ("The user is vegan." -> "I am vegan."). */
export function firstPersonMemoryText(text: string): string {
  const words: Word[] = [...text.matchAll(WORD)].map((m) => ({ text: m[0], lower: m[0].toLowerCase(), start: m.index, end: m.index + m[0].length }));
  const out: string[] = [];
  let copiedTo = 0;
  let changed = false;
  const gapBefore = (i: number) => text.slice(i === 0 ? 0 : (words[i - 1] as Word).end, (words[i] as Word).start);
  const joinedBySpace = (i: number) => /^\s+$/.test(gapBefore(i));
  const sentenceStart = (i: number) => i === 0 || /[.!?]/.test(gapBefore(i));
  const clauseStart = (i: number) => sentenceStart(i) || /[:;,(—–-]/.test(gapBefore(i)) || CLAUSE_OPENERS.has((words[i - 1] as Word).lower);
  const replace = (from: number, to: number, by: string) => {
    out.push(text.slice(copiedTo, from), by);
    copiedTo = to;
    changed = true;
  };

  for (let i = 0; i < words.length; i++) {
    const w = words[i] as Word;
    const next = words[i + 1];
    // "the user's" -> "my"; a bare "user's" too, unless it is someone's ("a user's guide").
    if (w.lower === 'the' && next && isPossessiveUser(next.lower) && joinedBySpace(i + 1)) {
      replace(w.start, next.end, sentenceStart(i) ? 'My' : 'my');
      i++;
      continue;
    }
    if (isPossessiveUser(w.lower) && (i === 0 || !DETERMINERS.has((words[i - 1] as Word).lower))) {
      replace(w.start, w.end, sentenceStart(i) ? 'My' : 'my');
      continue;
    }
    // "the user", or "User" opening a sentence: the person, unless a noun follows ("the user interface").
    const theUser = w.lower === 'the' && next?.lower === 'user' && joinedBySpace(i + 1);
    const bareUser = w.lower === 'user' && sentenceStart(i);
    if (!theUser && !bareUser) continue;
    const userIndex = theUser ? i + 1 : i;
    const after = words[userIndex + 1];
    if (after && COMPOUND_NOUNS.has(after.lower) && joinedBySpace(userIndex + 1)) {
      i = userIndex;
      continue;
    }
    if (!clauseStart(i)) {
      replace(w.start, (words[userIndex] as Word).end, 'me');
      i = userIndex;
      continue;
    }
    replace(w.start, (words[userIndex] as Word).end, 'I');
    // The verb agrees with "I": skip adverbs ("also", "no longer", "-ly"), then reword a third-person form.
    let j = userIndex + 1;
    for (;;) {
      const v = words[j];
      if (!v || !joinedBySpace(j)) break;
      if (ADVERBS.has(v.lower) || (v.lower.length > 4 && v.lower.endsWith('ly'))) j++;
      else if (v.lower === 'no' && words[j + 1]?.lower === 'longer') j += 2;
      else break;
    }
    const verb = words[j];
    const reworded = verb && joinedBySpace(j) ? firstPersonVerb(verb.text) : undefined;
    if (verb && reworded !== undefined && reworded !== verb.lower) replace(verb.start, verb.end, reworded);
    i = verb && reworded !== undefined ? j : userIndex;
  }
  if (!changed) return text;
  out.push(text.slice(copiedTo));
  return out.join('');
}
