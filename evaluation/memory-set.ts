/**
 * The labelled recall set of the evaluation: facts about one user, and
 * questions about them in several phrasings, each expecting exactly one
 * memory. Near-topic distractors share a word with the asked attribute
 * ("home city" against "birth city"), so a recall that matches words loosely
 * pays for it in precision. Another user's copies of the same facts must
 * never come back.
 */
export interface LabelledQuery {
  query: string;
  /** The predicate of the one memory that answers it. */
  expected: string;
}

export interface LabelledSet {
  facts: Array<{ predicate: string; value: string }>;
  queries: LabelledQuery[];
}

const ATTRIBUTES: Array<[string, string]> = [
  ['home city', 'Lisbon'], ['birth city', 'Coimbra'], ['favourite colour', 'teal'], ['car colour', 'silver'],
  ['dog name', 'Biscuit'], ['cat name', 'Miso'], ['manager name', 'Rui Costa'], ['dentist name', 'Dr Sousa'],
  ['team name', 'Platform'], ['project codename', 'Apollo'], ['office floor', 'seventh'], ['desk number', 'D-114'],
  ['gym schedule', 'Tuesday evenings'], ['bank branch', 'Avenida'], ['editor of choice', 'Neovim'], ['primary language', 'TypeScript'],
  ['second language', 'Kotlin'], ['spoken language', 'Portuguese'], ['coffee order', 'flat white'], ['tea preference', 'green tea'],
  ['shoe size', '42'], ['shirt size', 'medium'], ['blood type', 'A positive'], ['allergy', 'peanuts'],
  ['anniversary date', 'June 3rd'], ['birthday', 'March 14th'], ['partner name', 'Sofia'], ['son name', 'Tiago'],
  ['daughter name', 'Ines'], ['landlord name', 'Mr Pires'], ['internet provider', 'Meo'], ['phone model', 'Pixel 8'],
  ['laptop model', 'ThinkPad X1'], ['keyboard layout', 'Portuguese ISO'], ['time zone', 'Europe/Lisbon'], ['working hours', 'nine to five'],
  ['parking spot', 'B-12'], ['train line', 'Cascais line'], ['favourite band', 'Madredeus'], ['favourite book', 'Blindness'],
  ['running distance', 'ten kilometres'], ['marathon goal', 'under four hours'], ['savings goal', 'a new kitchen'], ['holiday destination', 'Azores'],
  ['hotel preference', 'quiet rooms'], ['seat preference', 'aisle seats'], ['meal preference', 'vegetarian'], ['meeting preference', 'mornings'],
  ['password manager', 'Bitwarden'], ['cloud provider', 'AWS'],
];

const PHRASINGS = [(a: string) => `What is my ${a}?`, (a: string) => `Remind me of my ${a}, please`, (a: string) => `Do you remember my ${a}?`, (a: string) => `I forgot my ${a}; what was it?`];

/** `size` queries (at most 200), spread over the attributes and phrasings. */
export function labelledSet(size = 200): LabelledSet {
  const facts = ATTRIBUTES.map(([predicate, value]) => ({ predicate, value }));
  const queries: LabelledQuery[] = [];
  for (const phrase of PHRASINGS) for (const [predicate] of ATTRIBUTES) queries.push({ query: phrase(predicate), expected: predicate });
  // Interleave so a small run still covers every phrasing.
  const spread = queries.map((q, i) => ({ q, k: (i % ATTRIBUTES.length) * PHRASINGS.length + Math.floor(i / ATTRIBUTES.length) })).sort((a, b) => a.k - b.k);
  return { facts, queries: spread.slice(0, Math.min(size, queries.length)).map((s) => s.q) };
}
