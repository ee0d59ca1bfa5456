import { MAX_CANDIDATE_FIELD_CHARS } from '../../activities/memory/memory-candidate';
import { parseExtractionOutput, withoutFence } from '../../activities/memory/extraction-prompt';
import { normalizeText, trimEndOf } from '../../activities/memory/memory-normalize';

/*
 * Text the extraction model writes (and a user may have written first) is
 * read on the worker's one thread: each step here takes time in proportion
 * to the text, and answers what the regular expression it replaced did.
 */

function randomTexts(pieces: string[], count: number, seed: number): string[] {
  let s = seed;
  const next = () => (s = (s * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648;
  return Array.from({ length: count }, () => Array.from({ length: 1 + Math.floor(next() * 8) }, () => pieces[Math.floor(next() * pieces.length)]).join(''));
}

const quick = (what: string, run: () => unknown) => {
  const started = performance.now();
  run();
  expect({ what, fast: performance.now() - started < 500 }).toEqual({ what, fast: true });
};

describe('memory text read in one pass', () => {
  it('the code fence around an answer is taken off as before, and 100,000 blanks cost their length', () => {
    for (const text of randomTexts(['```', 'json', ' ', '\n', '\t', '{}', 'x', '`'], 20_000, 3)) {
      expect({ text, out: withoutFence(text) }).toEqual({ text, out: text.replace(/^```(?:json)?\s*|\s*```$/g, '') });
    }
    quick('fence', () => withoutFence(`\u0000${'\t'.repeat(100_000)}\u0000`));
  });

  it('normalizeText gives what it gave, and 100,000 trailing blanks and marks cost their length', () => {
    const before = (t: string) =>
      t
        .toLowerCase()
        .replace(/[\u2018\u2019\u02bc]/g, "'")
        .replace(/[_\s]+/g, ' ')
        .replace(/^[\s"'`.,;:!?()[\]-]+|[\s"'`.,;:!?()[\]-]+$/g, '')
        .trim();
    for (const text of randomTexts(['a', 'My', ' ', '\t', '.', '!', '"', '(', ']', '-', '_', 'Lisbon', '\u2019'], 20_000, 4)) {
      expect({ text, out: normalizeText(text) }).toEqual({ text, out: before(text) });
    }
    quick('normalize', () => normalizeText(`x${'\t'.repeat(50_000)}${'.!'.repeat(25_000)}y`));
    expect(trimEndOf('Lisbon.!.', /[.!]/)).toBe('Lisbon');
  });

  it('a candidate with a field over MAX_CANDIDATE_FIELD_CHARS is counted malformed at once, and the others are read', () => {
    const long = { kind: 'fact', subject: 'user', predicate: 'lives in', value: `Lisbon${'\t'.repeat(100_000)}.`, text: 'x', sourceMessageIndex: 0 };
    const fine = { kind: 'fact', subject: 'user', predicate: 'lives in', value: 'Lisbon', text: 'The user lives in Lisbon.', sourceMessageIndex: 0 };
    let parsed: ReturnType<typeof parseExtractionOutput> | undefined;
    quick('parse', () => (parsed = parseExtractionOutput(`\`\`\`json\n${JSON.stringify({ candidates: [long, fine] })}\n\`\`\``)));
    expect(parsed).toMatchObject({ malformed: 1, total: 2, candidates: [expect.objectContaining({ value: 'Lisbon' })] });
    expect(MAX_CANDIDATE_FIELD_CHARS).toBeGreaterThan(280);
  });
});
