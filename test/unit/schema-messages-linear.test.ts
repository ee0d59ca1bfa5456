import { dependencyOf, requiredPropertyOf } from '../../workflows/json-schema-check';
import { checkJsonSchemaLegacy } from '../../workflows/json-schema-check-legacy';

/*
 * Text read inside the workflow that a tool's schema (an MCP server's) or
 * the model's arguments make: read in one pass, and to the same result as
 * the regular expressions it replaced (their answers reach the model's
 * input, which a replayed workflow must see again).
 */

const REQUIRED_BEFORE = /required property "(.*)"\.$/;
const DEPENDENCY_BEFORE = /has "(.*)" but does not have "(.*)"\.$/;
const EMAIL_BEFORE = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

function randomTexts(pieces: string[], count: number, seed: number): string[] {
  let s = seed;
  const next = () => (s = (s * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648;
  return Array.from({ length: count }, () => Array.from({ length: 1 + Math.floor(next() * 8) }, () => pieces[Math.floor(next() * pieces.length)]).join(''));
}

const emailIssues = (value: string) => checkJsonSchemaLegacy({ to: value }, { type: 'object', properties: { to: { type: 'string', format: 'email' } } });

describe('messages of the schema check, and the legacy email format', () => {
  it('name the same property as the expressions before, for 20,000 random messages each', () => {
    let named = 0;
    let pairs = 0;
    for (const text of randomTexts(['required property "', 'Instance does not have ', '"', '.', '".', 'a', 'x y', '\n', '\u2028', 'has "', '" but does not have "'], 20_000, 5)) {
      expect({ text, key: requiredPropertyOf(text) }).toEqual({ text, key: REQUIRED_BEFORE.exec(text)?.[1] });
      const before = DEPENDENCY_BEFORE.exec(text);
      expect({ text, pair: dependencyOf(text) }).toEqual({ text, pair: before ? [before[1], before[2]] : undefined });
      if (before) pairs += 1;
      if (REQUIRED_BEFORE.test(text)) named += 1;
    }
    expect({ named: named > 200, pairs: pairs > 20 }).toEqual({ named: true, pairs: true });
  });

  it('take time in proportion to the message: a property name of 12,000 repeats of the pattern', () => {
    const started = performance.now();
    expect(requiredPropertyOf(`Instance does not have ${'required property "'.repeat(12_000)}\nrequired property "".`)).toBe('');
    expect(dependencyOf(`Instance ${'has "'.repeat(20_000)}${'" but does not have "'.repeat(20_000)}h`)).toBeUndefined();
    expect(performance.now() - started).toBeLessThan(500);
  });

  it('the legacy email format accepts what its expression did, for 20,000 random values, and a domain of 80,000 dots in good time', () => {
    let accepted = 0;
    for (const value of randomTexts(['a', 'b.c', 'ana', '@', '@', '.', '..', 'x.', ' ', '\u00a0', '\t'], 20_000, 9)) {
      expect({ value, ok: emailIssues(value).length === 0 }).toEqual({ value, ok: EMAIL_BEFORE.test(value) });
      if (EMAIL_BEFORE.test(value)) accepted += 1;
    }
    // Both answers are asked: a few hundred of the values are addresses.
    expect(accepted).toBeGreaterThan(200);
    const started = performance.now();
    expect(emailIssues(`a@a${'.a'.repeat(40_000)}.@..a`)).not.toEqual([]);
    expect(performance.now() - started).toBeLessThan(500);
  });
});
