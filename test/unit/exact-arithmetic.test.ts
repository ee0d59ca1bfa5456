import { calculateTool } from '../../activities/tools/builtin-tools';
import { evaluateExact, toDecimal } from '../../activities/tools/exact-arithmetic';

const calc = (expression: string) => toDecimal(evaluateExact(expression));

describe('exact arithmetic', () => {
  it('has no floating-point drift', () => {
    expect(calc('0.1 + 0.2')).toBe('0.3');
    expect(calc('(1250.50 - 300) * 1.2')).toBe('1140.6');
  });

  it('respects precedence, unary minus, powers and modulo', () => {
    expect(calc('2 + 3 * 4')).toBe('14');
    expect(calc('-(2 + 3) ^ 2')).toBe('-25');
    expect(calc('2^64')).toBe('18446744073709551616');
    expect(calc('2^-2')).toBe('0.25');
    expect(calc('17 % 5')).toBe('2');
    expect(calc('1.5e3 / 4')).toBe('375');
  });

  it('returns a fraction and an approximation when the decimal does not terminate', async () => {
    const out = (await calculateTool.execute({ expression: '1/3 + 1/6 + 1/7' }, {} as never)) as Record<string, unknown>;
    expect(out).toMatchObject({ result: '9/14', exact: false });
    expect(String(out.approximately)).toMatch(/^0\.6428571428/);
  });

  it('rejects what is not arithmetic with a message that points at the problem', () => {
    expect(() => evaluateExact('1 / 0')).toThrow(/division by zero/);
    expect(() => evaluateExact('2 + process.exit()')).toThrow(/unexpected "p" at position 5/);
    expect(() => evaluateExact('(1 + 2')).toThrow(/missing "\)"/);
    expect(() => evaluateExact('2 ^ 0.5')).toThrow(/whole numbers/);
  });
});
