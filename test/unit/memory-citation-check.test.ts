import { checkCitations, citationCorrection } from '../../activities/memory/citation-check';
import { tidyRemovals } from '../../workflows/memory-citations';

describe('memory citation check', () => {
  const injected = ['ab12', 'cd34'];

  it('accepts an answer that cites only injected ids', () => {
    const answer = 'You prefer concise answers [mem:ab12], so here it is briefly [mem:CD34].';
    expect(checkCitations(answer, injected)).toEqual({ cited: ['ab12', 'cd34'], unknown: [], cleaned: answer });
  });

  it('finds an unknown id and removes only that citation', () => {
    const result = checkCitations('You live in Lisbon [mem:ab12] and travel on Friday [mem:ffff].', injected);
    expect(result.unknown).toEqual(['ffff']);
    expect(result.cited).toEqual(['ab12']);
    expect(result.cleaned).toBe('You live in Lisbon [mem:ab12] and travel on Friday.');
  });

  it('handles grouped citations', () => {
    const result = checkCitations('Noted [mem:ab12, mem:9999; cd34] and [mem:eeee, ffff] here', injected);
    expect(result.unknown).toEqual(['9999', 'eeee', 'ffff']);
    expect(result.cleaned).toBe('Noted [mem:ab12, mem:cd34] and here');
  });

  it('treats every citation as unknown when nothing was injected', () => {
    const result = checkCitations('As you told me [mem:ab12], you like tea.', []);
    expect(result.unknown).toEqual(['ab12']);
    expect(result.cleaned).toBe('As you told me, you like tea.');
  });

  it('leaves answers without citations alone', () => {
    expect(checkCitations('Hello there.', injected)).toEqual({ cited: [], unknown: [], cleaned: 'Hello there.' });
  });

  it('writes a correction naming the bad and the allowed ids', () => {
    const text = citationCorrection(['ffff'], injected);
    expect(text).toContain('[mem:ffff]');
    expect(text).toContain('[mem:ab12], [mem:cd34]');
    expect(citationCorrection(['ffff'], [])).toContain('no memories were recalled');
  });
});

describe('citations in the other forms models write (wide)', () => {
  const injected = ['ab12', 'cd34'];
  it('reads full-width brackets and colons, and Chinese commas between ids', () => {
    const answer = 'Lisbon [mem:ab12]. 上海【mem：cd34】. Oslo ［mem:zz99］, Paris 【mem:cd34，mem:yy11】.';
    const check = checkCitations(answer, injected, { wide: true });
    expect(check.cited).toEqual(['ab12', 'cd34']);
    expect(check.unknown).toEqual(['zz99', 'yy11']);
    // Known citations stay (written the usual way), unknown ones go.
    expect(check.cleaned).toBe('Lisbon [mem:ab12]. 上海[mem:cd34]. Oslo, Paris [mem:cd34].');
  });

  it('does not take code or a full id for a citation: [mem_idx], buf[MEM_LEN], [mem_<24 hex>]', () => {
    const answer = `Use arr[mem_idx] and buf[MEM_LEN]; I deleted [mem_${'f'.repeat(24)}].`;
    expect(checkCitations(answer, injected, { wide: true })).toEqual({ cited: [], unknown: [], cleaned: answer });
  });

  it('without wide, only [mem:<id>] is read, as before', () => {
    expect(checkCitations('Oslo ［mem:zz99］', injected).unknown).toEqual([]);
    expect(checkCitations('Oslo [mem:zz99]', injected, { wide: true }).unknown).toEqual(['zz99']);
  });
});

describe('citations in parentheses and with ids joined by words (broad)', () => {
  const injected = ['ab12', 'cd34'];
  it('reads (mem:id), （mem:id） and ids joined by and, &, 和 or 及, after the wide forms', () => {
    const answer = 'Lisbon (mem:ab12) and Oslo （mem：ffee）. Both [mem:cd34 and mem:beef]; 上海【mem:ab12和cd34及d00d】. Rome [mem:zz99].';
    const check = checkCitations(answer, injected, { broad: true });
    expect(check.unknown).toEqual(['zz99', 'ffee', 'beef', 'd00d']);
    expect(check.cited).toEqual(['ab12', 'cd34']);
    expect(check.cleaned).toBe('Lisbon [mem:ab12] and Oslo. Both [mem:cd34]; 上海[mem:ab12, mem:cd34]. Rome.');
    // The wide reading alone misses every one of these but the bracketed non-hex id.
    expect(checkCitations(answer, injected, { wide: true }).unknown).toEqual(['zz99']);
  });

  it('does not take what else sits in parentheses for a citation: a size, a unit, a word', () => {
    const answer = 'Give it more memory (mem: 2048), or (mem:4gb); see (memo: ab12) and (mem:ab12 later).';
    expect(checkCitations(answer, injected, { broad: true })).toEqual({ cited: [], unknown: [], cleaned: answer });
  });

  it('still reads an id of digits alone when it was injected', () => {
    expect(checkCitations('Noted (mem:1234).', ['1234'], { broad: true })).toEqual({ cited: ['1234'], unknown: [], cleaned: 'Noted (mem:1234).' });
  });
});

describe('tidying the places citations were removed from', () => {
  // What tidyRemovals did before it became one pass: its answers must not change (they reach the model's input and
  // the turn's text, whose length a replayed workflow must see again).
  const before = (text: string) =>
    text
      .replace(/[ \t]*\u0000(?:[ \t]*\u0000)*(?=[ \t]*[.,;:!?)])/g, '')
      .replace(/[ \t]*\u0000(?:[ \t]*\u0000)*[ \t]*/g, ' ')
      .replace(/ +\n/g, '\n')
      .replace(/^ +| +$/g, '');

  it('gives what the regular expressions gave, for 20,000 random texts of blanks, marks, punctuation and words', () => {
    const pieces = [' ', ' ', '\t', '\u0000', '\u0000', '.', ')', ',', '?', 'a', 'Lisbon', '\n', '-'];
    let seed = 7;
    const next = () => (seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648;
    for (let n = 0; n < 20_000; n++) {
      const text = Array.from({ length: 1 + Math.floor(next() * 14) }, () => pieces[Math.floor(next() * pieces.length)]).join('');
      expect({ text, tidied: tidyRemovals(text) }).toEqual({ text, tidied: before(text) });
    }
  });

  it('takes time in proportion to the text: an answer with 200,000 blanks and an invented citation', () => {
    const answer = `Lisbon [mem:ffee]${' '.repeat(100_000)}\t${' '.repeat(100_000)}x [mem:ab12]`;
    const started = performance.now();
    const check = checkCitations(answer, ['ab12'], { broad: true });
    expect(performance.now() - started).toBeLessThan(500);
    expect(check.unknown).toEqual(['ffee']);
    expect(check.cleaned.endsWith('x [mem:ab12]')).toBe(true);
  });
});
