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

// Also what models write instead: a full id (`[mem_<24 hex>]`, as find_memories hands them out), full-width
// brackets and colons (`【mem:ab12】`, `［mem：ab12］`), Chinese commas between ids.
const WIDE_GROUP = /[[\u3010\uff3b]\s*mem\s*[:_\uff1a]\s*([0-9a-z]{1,32}(?:\s*[,;\uff0c\u3001]\s*(?:mem\s*[:_\uff1a]\s*)?[0-9a-z]{1,32})*)\s*[\]\u3011\uff3d]/gi;
const WIDE_SEPARATOR = /\s*[,;\uff0c\u3001]\s*(?:mem\s*[:_\uff1a]\s*)?/i;
/** A full memory id's hex: `mem_` and 24 hex digits, of which an injected short id is the start. */
const FULL_HEX = /^[0-9a-f]{24}$/;

/**
 * Finds `[mem:<id>]` citations and checks them against the ids injected this
 * turn. `wide` also reads the other forms (WIDE_GROUP); a full id counts as
 * the injected short id it starts with.
 */
export function checkCitations(answer: string, injectedIds: Iterable<string>, options: { wide?: boolean } = {}): CitationCheck {
  const injected = new Set([...injectedIds].map((id) => id.toLowerCase()));
  if (options.wide) return checkWith(answer, WIDE_GROUP, WIDE_SEPARATOR, (id) => injected.has(id) || (FULL_HEX.test(id) && [...injected].some((s) => id.startsWith(s))));
  return checkWith(answer, GROUP, SEPARATOR, (id) => injected.has(id));
}

function checkWith(answer: string, group: RegExp, separator: RegExp, known: (id: string) => boolean): CitationCheck {
  const cited: string[] = [];
  const unknown: string[] = [];
  const note = (list: string[], id: string) => {
    if (!list.includes(id)) list.push(id);
  };
  const replaced = answer.replace(group, (_match, inner: string) => {
    const ids = inner.split(separator).map((id) => id.trim().toLowerCase());
    const kept = ids.filter(known);
    for (const id of ids) note(known(id) ? cited : unknown, id);
    return kept.length === 0 ? '\u0000' : `[${kept.map((id) => `mem:${id}`).join(', ')}]`;
  });
  return { cited, unknown, cleaned: unknown.length === 0 ? answer : tidyRemovals(replaced) };
}

/** Removes the marks left where whole citations were dropped, and the spaces around them. */
function tidyRemovals(text: string): string {
  return text
    .replace(/[ \t]*\u0000+(?=[ \t]*[.,;:!?)])/g, '')
    .replace(/[ \t]*\u0000+[ \t]*/g, ' ')
    .replace(/ +\n/g, '\n')
    .replace(/^ +| +$/g, '');
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
