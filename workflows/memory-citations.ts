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

/** Finds `[mem:<id>]` citations and checks them against the ids injected this turn. */
export function checkCitations(answer: string, injectedIds: Iterable<string>): CitationCheck {
  const injected = new Set([...injectedIds].map((id) => id.toLowerCase()));
  const cited: string[] = [];
  const unknown: string[] = [];
  const note = (list: string[], id: string) => {
    if (!list.includes(id)) list.push(id);
  };
  const replaced = answer.replace(GROUP, (_match, inner: string) => {
    const ids = inner.split(SEPARATOR).map((id) => id.trim().toLowerCase());
    const kept = ids.filter((id) => injected.has(id));
    for (const id of ids) note(injected.has(id) ? cited : unknown, id);
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
