import { MAX_USER_MESSAGE_CHARS, buildExtractionMessages, parseExtractionOutput } from '../../activities/memory/extraction-prompt';
import { flattenTurns } from '../../activities/memory/transcript';

const excerptOf = (messages: Parameters<typeof flattenTurns>[0][number]['messages']) => buildExtractionMessages(flattenTurns([{ turnId: 'turn-1', messages }]), [])[1]!.content;

describe('the excerpt the extraction model reads', () => {
  it("shows a long user message whole up to 8,000 characters: a request to remember at the end of it is seen (it was cut at 1,500)", () => {
    const said = `${'Some context about my week. '.repeat(65)}Please remember that my daughter is called Mia.`;
    expect(said.length).toBeGreaterThan(1_800);
    expect(excerptOf([{ role: 'user', content: said }])).toContain('Please remember that my daughter is called Mia.');
  });

  it('keeps the start and the end of a longer user message, saying how much was cut between them', () => {
    const said = `My name is Ana. ${'x'.repeat(30_000)} Please remember that my daughter is called Mia.`;
    const excerpt = excerptOf([{ role: 'user', content: said }]);
    expect(excerpt).toContain('My name is Ana.');
    expect(excerpt).toContain('Please remember that my daughter is called Mia.');
    expect(excerpt).toContain(`[... ${said.length - MAX_USER_MESSAGE_CHARS} characters cut ...]`);
    expect(excerpt.length).toBeLessThan(MAX_USER_MESSAGE_CHARS + 500);
  });

  it('still cuts long tool output at 1,500 characters', () => {
    const excerpt = excerptOf([
      { role: 'user', content: 'look it up' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'mcp_crm_lookup', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: `${'t'.repeat(5_000)}END` },
    ]);
    expect(excerpt).toContain(`${'t'.repeat(1_500)} [... cut]`);
    expect(excerpt).not.toContain('END');
  });
});

describe("the extraction model's answer", () => {
  it('with more than 50 candidates keeps the first 50 and counts the rest over the limit (the whole answer was refused, and every retry the same)', () => {
    const candidate = (i: number) => ({ kind: 'fact', subject: 'user', predicate: `attribute ${i}`, value: `value ${i}`, text: `The user's attribute ${i} is value ${i}.`, sourceMessageIndex: 0 });
    const parsed = parseExtractionOutput(JSON.stringify({ candidates: Array.from({ length: 57 }, (_, i) => candidate(i)) }));
    expect({ kept: parsed.candidates.length, overLimit: parsed.overLimit, total: parsed.total, malformed: parsed.malformed }).toEqual({ kept: 50, overLimit: 7, total: 57, malformed: 0 });
    expect(parsed.candidates.at(-1)?.value).toBe('value 49');
  });
});
