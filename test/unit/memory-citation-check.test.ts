import { checkCitations, citationCorrection } from '../../activities/memory/citation-check';

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
