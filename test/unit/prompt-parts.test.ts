import { PromptLedger, contentTag, promptDigest } from '../../workflows/prompt-parts';

describe('prompts by reference, as the workflow builds them', () => {
  const system = { role: 'system', content: 'You are helpful.' };
  const user = { role: 'user', content: 'hi' };
  const tool = { name: 'local_calculate', description: 'adds', parameters: { type: 'object' } };
  const tagOf = (value: unknown) => contentTag(JSON.stringify(value));

  it('name parts in their order of first sending, and tag the prompt with its parts\' tags in order', () => {
    const ledger = new PromptLedger();
    const { prompt, inline } = ledger.compact([system, user], [tool]);
    expect(prompt.messages).toEqual(['p1', 'p2']);
    expect(prompt.tools).toEqual(['p3']);
    expect(inline).toEqual(['p1', 'p2', 'p3']);
    expect(prompt.parts).toEqual({ p1: system, p2: user, p3: tool });
    expect(prompt.digest).toBe(promptDigest([tagOf(system), tagOf(user), tagOf(tool)]));
  });

  it('give the same text the same id, and send it inline only until a call carrying it completed', () => {
    const ledger = new PromptLedger();
    const first = ledger.compact([system, user], []);
    expect(ledger.compact([{ ...system }], []).prompt.messages).toEqual(['p1']);
    ledger.confirm(first.inline);
    const next = ledger.compact([system, user, { role: 'assistant', content: 'hello' }], []);
    expect(next.prompt.messages).toEqual(['p1', 'p2', 'p3']);
    expect(Object.keys(next.prompt.parts)).toEqual(['p3']);
    ledger.forget();
    expect(Object.keys(ledger.compact([system], []).prompt.parts)).toEqual(['p1']);
  });

  it('tag a prompt differently when a part at the same position has another text, as when a reset run is replayed by code that words a message differently', () => {
    const before = new PromptLedger().compact([system, user], []).prompt;
    const after = new PromptLedger().compact([{ role: 'system', content: 'You are terse.' }, user], []).prompt;
    expect(after.messages).toEqual(before.messages);
    expect(after.digest).not.toBe(before.digest);
    // Order counts too.
    expect(new PromptLedger().compact([user, system], []).prompt.digest).not.toBe(before.digest);
  });

  it('tag a text with six hex digits, the same every time', () => {
    const tag = tagOf(system);
    expect(tag).toMatch(/^[0-9a-f]{6}$/);
    expect(tagOf({ role: 'system', content: 'You are helpful.' })).toBe(tag);
    expect(contentTag('')).toMatch(/^[0-9a-f]{6}$/);
    expect(tagOf(user)).not.toBe(tag);
  });

  it('tags as every earlier version did: workers check digests written by older runs', () => {
    // FNV-1a over the UTF-16 code units, bits 8 to 31: values from the first version of the tag.
    expect(contentTag(JSON.stringify({ role: 'user', content: 'hi' }))).toBe('5de3a9');
    expect(contentTag('')).toBe('811c9d');
    expect(promptDigest(['p1', 'p2'])).toBe(contentTag('p1,p2'));
    expect(contentTag('p1,p2')).toBe('a974c2');
  });
  it('freeze a message or tool once it is referred, nested parts too, so a change after sending throws instead of going unseen', () => {
    const ledger = new PromptLedger();
    const assistant = { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'local_calculate', arguments: '{"a":1}' } }] };
    const offered = { name: 'local_lookup', description: 'finds', parameters: { type: 'object', properties: { q: { type: 'string' } } } };
    ledger.compact([assistant], [offered]);
    expect(() => {
      (assistant as { content: string | null }).content = 'changed';
    }).toThrow(TypeError);
    expect(() => {
      assistant.tool_calls[0]!.function.arguments = '{"a":2}';
    }).toThrow(TypeError);
    expect(() => assistant.tool_calls.push(assistant.tool_calls[0]!)).toThrow(TypeError);
    expect(() => {
      offered.parameters.properties.q.type = 'number';
    }).toThrow(TypeError);
    expect(assistant.tool_calls[0]!.function.arguments).toBe('{"a":1}');
  });

  it('read the id of an object already referred without turning it into JSON again, and give an equal new object the same id', () => {
    const ledger = new PromptLedger();
    const window = [{ role: 'user', content: 'one' }, { role: 'assistant', content: 'two' }];
    const first = ledger.compact(window, [tool]).prompt;
    const stringify = jest.spyOn(JSON, 'stringify');
    try {
      const next = ledger.compact([...window, { role: 'user', content: 'three' }], [tool]).prompt;
      // Only the new message was turned into JSON.
      expect(stringify).toHaveBeenCalledTimes(1);
      expect(next.messages).toEqual([...first.messages, 'p4']);
      expect(next.tools).toEqual(first.tools);
      expect(next.digest).toBe(promptDigest([...window, { role: 'user', content: 'three' }, tool].map(tagOf)));
    } finally {
      stringify.mockRestore();
    }
    expect(ledger.compact([{ role: 'user', content: 'one' }], []).prompt.messages).toEqual([first.messages[0]]);
  });
});
