import { z } from 'zod';
import { defineTool } from './native-tool';
import { ToolInputError } from './tool-errors';
import { ArithmeticError, evaluateExact, toDecimal, toRounded } from './exact-arithmetic';

function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

export const currentTimeTool = defineTool({
  name: 'current_time',
  description:
    'Returns the current date and time in an IANA time zone. Use it whenever the answer depends on "now": today\'s date, ' +
    'the weekday, the time somewhere, or to resolve relative dates like "tomorrow" or "as soon as possible" before calling ' +
    'another tool. Do not use it for historical dates or for converting a given timestamp. If the user names a city, pass ' +
    'its zone (Paris -> "Europe/Paris"); if no zone is known, use "UTC".',
  parameters: z.object({
    timeZone: z
      .string()
      .describe('IANA time zone name, e.g. "Europe/Paris", "America/New_York" or "UTC".')
      .meta({ examples: ['Europe/Paris', 'Asia/Shanghai', 'UTC'] })
      .default('UTC'),
  }),
  risk: 'read',
  timeoutMs: 2_000,
  async execute({ timeZone }) {
    if (!isTimeZone(timeZone)) throw new ToolInputError(`unknown time zone "${timeZone}"; use an IANA name such as "Europe/Paris"`);
    const now = new Date();
    const parts = new Intl.DateTimeFormat('en-CA', {
      timeZone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      hour12: false,
      weekday: 'long',
      timeZoneName: 'longOffset',
    }).formatToParts(now);
    const get = (type: string) => parts.find((p) => p.type === type)?.value ?? '';
    const offset = get('timeZoneName').replace('GMT', '') || '+00:00';
    const hour = get('hour') === '24' ? '00' : get('hour');
    return {
      timeZone,
      localDateTime: `${get('year')}-${get('month')}-${get('day')}T${hour}:${get('minute')}:${get('second')}`,
      utcOffset: offset,
      weekday: get('weekday'),
      utc: now.toISOString(),
    };
  },
});

export const calculateTool = defineTool({
  name: 'calculate',
  description:
    'Evaluates an arithmetic expression exactly (rational arithmetic, no rounding errors: 0.1 + 0.2 = 0.3). Supports + - * / ' +
    '% ^ (whole exponents), parentheses, decimals and scientific notation. Use it for any calculation whose result matters ' +
    '(money, quantities, percentages: write 15% of 80 as "80 * 15 / 100"). Do not use it for unit conversions, dates or ' +
    'symbolic algebra. Example: {"expression": "(1250.50 - 300) * 1.2"}.',
  parameters: z.object({
    expression: z
      .string()
      .min(1)
      .max(1000)
      .describe('The expression, using only numbers, + - * / % ^ and parentheses.')
      .meta({ examples: ['(1250.50 - 300) * 1.2', '2^64', '1/3 + 1/6'] }),
  }),
  risk: 'read',
  timeoutMs: 2_000,
  async execute({ expression }) {
    try {
      const value = evaluateExact(expression);
      const exact = toDecimal(value);
      return {
        expression,
        result: exact ?? `${value.n}/${value.d}`,
        exact: exact !== null,
        ...(exact === null ? { approximately: toRounded(value) } : {}),
      };
    } catch (err) {
      if (err instanceof ArithmeticError) throw new ToolInputError(err.message);
      throw err;
    }
  },
});
