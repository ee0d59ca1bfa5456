import { PromptLedger, contentTag, tagOfId } from '../../workflows/prompt-parts';

describe('prompt part ids', () => {
  const system = { role: 'system', content: 'You are helpful.' };
  const user = { role: 'user', content: 'hi' };
  const tool = { name: 'local_calculate', description: 'adds', parameters: { type: 'object' } };

  it('name a part by its order of first sending and a tag of its text', () => {
    const ledger = new PromptLedger();
    const { prompt, inline } = ledger.compact([system, user], [tool]);
    expect(prompt.messages).toEqual([`p1.${contentTag(JSON.stringify(system))}`, `p2.${contentTag(JSON.stringify(user))}`]);
    expect(prompt.tools).toEqual([`p3.${contentTag(JSON.stringify(tool))}`]);
    expect(inline).toEqual([...prompt.messages, ...prompt.tools]);
    expect(prompt.parts).toEqual({ [prompt.messages[0]!]: system, [prompt.messages[1]!]: user, [prompt.tools[0]!]: tool });
  });

  it('give the same text the same id, and send it inline only until a call carrying it completed', () => {
    const ledger = new PromptLedger();
    const first = ledger.compact([system, user], []);
    expect(ledger.compact([{ ...system }], []).prompt.messages).toEqual([first.prompt.messages[0]]);
    ledger.confirm(first.inline);
    const next = ledger.compact([system, user, { role: 'assistant', content: 'hello' }], []);
    expect(next.prompt.messages.slice(0, 2)).toEqual(first.prompt.messages);
    expect(Object.keys(next.prompt.parts)).toEqual([next.prompt.messages[2]]);
    ledger.forget();
    expect(Object.keys(ledger.compact([system], []).prompt.parts)).toEqual([first.prompt.messages[0]]);
  });

  it('differ for another text at the same position, as when a reset run is replayed by code that words a message differently', () => {
    const before = new PromptLedger().compact([system], []).prompt.messages[0]!;
    const after = new PromptLedger().compact([{ role: 'system', content: 'You are terse.' }], []).prompt.messages[0]!;
    expect(before.split('.')[0]).toBe('p1');
    expect(after.split('.')[0]).toBe('p1');
    expect(after).not.toBe(before);
  });

  it('tag a text with six hex digits, the same every time, and read the tag back from an id', () => {
    const tag = contentTag(JSON.stringify(system));
    expect(tag).toMatch(/^[0-9a-f]{6}$/);
    expect(contentTag(JSON.stringify(system))).toBe(tag);
    expect(contentTag('')).toMatch(/^[0-9a-f]{6}$/);
    expect(tagOfId(`p7.${tag}`)).toBe(tag);
    // Ids from before tags.
    expect(tagOfId('p7')).toBeUndefined();
  });
});
