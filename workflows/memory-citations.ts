/**
 * The citation check: an answer may cite only the memory ids injected this
 * turn. Pure and free of imports, so it can run in the workflow or in an
 * activity alike.
 */

export interface CitationCheck {
  /** Ids cited that were injected this turn, in order of first appearance. */
  cited: string[];
  /** Ids cited that were not injected this turn: invented, or from another turn. */
  unknown: string[];
  /** The answer with every unknown citation removed (known ones kept). */
  cleaned: string;
}

// `[mem:ab12]`, and the grouped forms models also produce: `[mem:ab12, mem:cd34]`, `[mem:ab12, cd34]`.
const GROUP = /\[\s*mem:\s*([0-9a-z]{1,32}(?:\s*[,;]\s*(?:mem:\s*)?[0-9a-z]{1,32})*)\s*\]/gi;
const SEPARATOR = /\s*[,;]\s*(?:mem:\s*)?/i;

// Also what models write instead: full-width brackets and colons (`【mem:ab12】`, `［mem：ab12］`), Chinese commas
// between ids. (`[mem_<id>]` is not read as a citation: it is also how code and full ids from find_memories look.)
const WIDE_GROUP = /[[\u3010\uff3b]\s*mem\s*[:\uff1a]\s*([0-9a-z]{1,32}(?:\s*[,;\uff0c\u3001]\s*(?:mem\s*[:\uff1a]\s*)?[0-9a-z]{1,32})*)\s*[\]\u3011\uff3d]/gi;
const WIDE_SEPARATOR = /\s*[,;\uff0c\u3001]\s*(?:mem\s*[:\uff1a]\s*)?/i;

// And what the wide reading still let through: parentheses (`(mem:ab12)`, `（mem:ab12）`), and ids joined by "and",
// "&", 和 or 及 (`[mem:ab12 and mem:cd34]`). Parentheses hold other things ("(mem: 2048)", "(mem:4gb)"), so here an id
// is what recall hands out (4 to 25 hex digits), and a group with an unknown id of digits alone is not a citation.
const BROAD_ID = '[0-9a-f]{4,25}';
const BROAD_JOIN = String.raw`\s*(?:[,;&\uff0c\u3001\u548c\u53ca]|\band\b)\s*(?:mem\s*[:\uff1a]\s*)?`;
const BROAD_GROUP = new RegExp(String.raw`[[(\u3010\uff3b\uff08]\s*mem\s*[:\uff1a]\s*(${BROAD_ID}(?:${BROAD_JOIN}${BROAD_ID})*)\s*[\])\u3011\uff3d\uff09]`, 'gi');
const BROAD_SEPARATOR = new RegExp(BROAD_JOIN, 'i');

/**
 * Finds `[mem:<id>]` citations and checks them against the ids injected this
 * turn. `wide` also reads the full-width forms (WIDE_GROUP); `broad` reads
 * those, then parentheses and ids joined by words (BROAD_GROUP) in what is
 * left. Its `cited` and `unknown` list the wide reading's ids first.
 */
export function checkCitations(answer: string, injectedIds: Iterable<string>, options: { wide?: boolean; broad?: boolean } = {}): CitationCheck {
  const injected = new Set([...injectedIds].map((id) => id.toLowerCase()));
  const known = (id: string) => injected.has(id);
  if (!options.broad) return checkWith(answer, options.wide ? WIDE_GROUP : GROUP, options.wide ? WIDE_SEPARATOR : SEPARATOR, known);
  const wide = checkWith(answer, WIDE_GROUP, WIDE_SEPARATOR, known);
  const rest = checkWith(wide.cleaned, BROAD_GROUP, BROAD_SEPARATOR, known, (ids) => ids.some((id) => /^[0-9]+$/.test(id) && !known(id)));
  const merged = (a: string[], b: string[]) => [...a, ...b.filter((id) => !a.includes(id))];
  return { cited: merged(wide.cited, rest.cited), unknown: merged(wide.unknown, rest.unknown), cleaned: rest.cleaned };
}

function checkWith(answer: string, group: RegExp, separator: RegExp, known: (id: string) => boolean, notCitation?: (ids: string[]) => boolean): CitationCheck {
  const cited: string[] = [];
  const unknown: string[] = [];
  const note = (list: string[], id: string) => {
    if (!list.includes(id)) list.push(id);
  };
  const replaced = answer.replace(group, (match, inner: string) => {
    const ids = inner.split(separator).map((id) => id.trim().toLowerCase());
    if (notCitation?.(ids)) return match;
    const kept = ids.filter(known);
    for (const id of ids) note(known(id) ? cited : unknown, id);
    return kept.length === 0 ? '\u0000' : `[${kept.map((id) => `mem:${id}`).join(', ')}]`;
  });
  return { cited, unknown, cleaned: unknown.length === 0 ? answer : tidyRemovals(replaced) };
}

/** Removes the marks left where whole citations were dropped, and the spaces around them. */
export function tidyRemovals(text: string): string {
  return trimSpaces(dropMarks(text));
}

const isBlank = (c: string | undefined): boolean => c === ' ' || c === '\t';
const BEFORE_PUNCTUATION = '.,;:!?)';

/**
 * One pass over the text, so long runs of blanks cost their length once (the regular expressions this replaces went
 * back over each run from every place in it: a model's answer with 50,000 spaces and a bad citation held the
 * workflow task for seconds). Marks next to each other, with blanks between, are one removal: before punctuation it
 * goes with the blanks before it ("Lisbon [mem:zz] ." becomes "Lisbon ."), elsewhere it and the blanks around it
 * become one space.
 */
function dropMarks(text: string): string {
  if (!text.includes('\u0000')) return text;
  let out = '';
  let i = 0;
  while (i < text.length) {
    let j = i;
    while (isBlank(text[j])) j++;
    if (text[j] !== '\u0000') {
      out += text.slice(i, j + 1);
      i = j + 1;
      continue;
    }
    // The group: a mark, then any more with only blanks between.
    let end = j + 1;
    for (;;) {
      let k = end;
      while (isBlank(text[k])) k++;
      if (text[k] !== '\u0000') break;
      end = k + 1;
    }
    let after = end;
    while (isBlank(text[after])) after++;
    const beforePunctuation = after < text.length && BEFORE_PUNCTUATION.includes(text[after]!);
    if (beforePunctuation) {
      i = end;
    } else {
      out += ' ';
      i = after;
    }
  }
  return out;
}

/** Spaces before a line break dropped, and at the start and end of the text (tabs stay), in one pass. */
function trimSpaces(text: string): string {
  let out = '';
  let i = 0;
  while (i < text.length) {
    let j = i;
    while (text[j] === ' ') j++;
    // A run of spaces: gone before a line break, at the start, or at the end.
    if (j > i && (i === 0 || j === text.length || text[j] === '\n')) {
      i = j;
      continue;
    }
    out += text.slice(i, j + 1);
    i = j + 1;
  }
  return out;
}

/**
 * The correction sent with the one regeneration an unknown citation earns:
 * names the bad ids and the ones that may be cited.
 */
export function citationCorrection(unknown: string[], injectedIds: string[]): string {
  const allowed = injectedIds.length > 0 ? injectedIds.map((id) => `[mem:${id}]`).join(', ') : 'none: no memories were recalled this turn';
  return (
    `Your previous answer cited ${unknown.map((id) => `[mem:${id}]`).join(', ')}, which ${unknown.length === 1 ? 'is' : 'are'} not among ` +
    `the memories recalled for this turn. Answer again. Cite only these ids, and only when the answer relies on them: ${allowed}. ` +
    'Do not state anything as remembered that is not in the recalled memories.'
  );
}
