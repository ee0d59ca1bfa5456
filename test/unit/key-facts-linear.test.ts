import { extractKeyFacts } from '../../workflows/key-facts';

/*
 * Key facts are read from every user message inside the workflow, where a
 * task that runs past 5 s fails and is retried for ever. The named-id
 * pattern had three \s* in a row around optional parts: a long run of
 * blanks after a keyword took cubic time.
 */

const at = '2026-12-05T00:00:00.000Z';
const factsOf = (text: string) => extractKeyFacts([{ role: 'user', content: text }], 'turn-1', at);

// The pattern before (its matches are the reference: the facts go into the prompt a replayed workflow sees again).
const BEFORE = /\b(task|ticket|order|invoice|case|issue|project|booking|account)\s*(?:id|number|no\.?|#)?\s*[:#]?\s*([A-Za-z0-9][\w-]{1,30})\b/gi;

describe('named ids in what the user says', () => {
  it('are read in time in proportion to the message: a keyword then 20,000 blanks of each kind', () => {
    for (const blank of [' ', '\t', '\r', '\u3000', '\u00a0']) {
      const started = performance.now();
      expect(factsOf(`my task${blank.repeat(20_000)}?`)).toEqual([]);
      expect({ blank: blank.codePointAt(0), ms: performance.now() - started < 500 }).toEqual({ blank: blank.codePointAt(0), ms: true });
    }
    expect(factsOf(`order${' '.repeat(20_000)}#  A-1234`)).toEqual([expect.objectContaining({ subject: 'order id', value: 'A-1234' })]);
  });

  it('are the ids the pattern before found, for 20,000 random sentences of keywords, labels, blanks and ids', () => {
    const pieces = ['task', 'Order', 'ticket', ' ', ' ', '\t', '#', ':', 'id', 'no.', 'no', 'number', 'A1', '12', 'x-9', '-', 'abc', '?'];
    let seed = 11;
    const next = () => (seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648;
    for (let n = 0; n < 20_000; n++) {
      const text = Array.from({ length: 1 + Math.floor(next() * 10) }, () => pieces[Math.floor(next() * pieces.length)]).join('');
      // Read sentence by sentence, as extractKeyFacts does.
      const sentences = text.split(/(?<=[.!?])\s+|\n+/).map((t) => t.trim()).filter(Boolean);
      const expected = sentences.flatMap((t) => [...t.matchAll(BEFORE)]).filter((m) => /\d/.test(m[2]!)).map((m) => ({ subject: `${m[1]!.toLowerCase()} id`, value: m[2] }));
      const got = factsOf(text)
        .filter((f) => f.subject.endsWith(' id'))
        .map((f) => ({ subject: f.subject, value: f.value }));
      expect({ text, got }).toEqual({ text, got: expected });
    }
  });
});
