/**
 * Exact arithmetic over rationals (BigInt numerator/denominator), parsed by
 * a small recursive-descent parser: no eval, no floating-point drift
 * (0.1 + 0.2 is exactly 0.3).
 */
export interface Rational {
  n: bigint;
  d: bigint;
}

const abs = (x: bigint): bigint => (x < 0n ? -x : x);
function gcd(a: bigint, b: bigint): bigint {
  a = abs(a);
  b = abs(b);
  while (b) [a, b] = [b, a % b];
  return a;
}
function make(n: bigint, d: bigint): Rational {
  if (d === 0n) throw new ArithmeticError('division by zero');
  if (d < 0n) [n, d] = [-n, -d];
  const g = gcd(n, d) || 1n;
  return { n: n / g, d: d / g };
}

export class ArithmeticError extends Error {
  override readonly name = 'ArithmeticError';
}

/** Results (numerator and denominator alike) are bounded in decimal digits. */
export const MAX_DIGITS = 2_000;
/**
 * Bound on the whole evaluation's work. Reducing a fraction (gcd) costs
 * about the product of its numerator's and denominator's sizes in bits, and
 * dominates every operation; the budget is that product summed over all
 * operations, calibrated so the worst 1000-character expression finishes in
 * a few tens of milliseconds: the tool runs on the worker's event loop.
 */
export const MAX_WORK = 4e8;
const BITS_PER_DIGIT = Math.log2(10);

/** Bit length of |x|; hex conversion is linear in the size, unlike decimal. */
function bitLength(x: bigint): number {
  if (x === 0n) return 0;
  const hex = abs(x).toString(16);
  return (hex.length - 1) * 4 + Number.parseInt(hex[0] as string, 16).toString(2).length;
}
const digitsOf = (bits: number): number => Math.floor(bits / BITS_PER_DIGIT) + 1;
const tooLarge = (digits: number) =>
  new ArithmeticError(`the result would have about ${digits} digits, more than the limit of ${MAX_DIGITS}; use smaller numbers or exponents`);

function guard(r: Rational): Rational {
  const bits = Math.max(bitLength(r.n), bitLength(r.d));
  if (digitsOf(bits) > MAX_DIGITS + 1) throw tooLarge(digitsOf(bits));
  return r;
}

/** Counts the work an evaluation does and stops it, before the operation that would go over MAX_WORK. */
class WorkMeter {
  private spent = 0;
  /** `numeratorBits` and `denominatorBits`: sizes of the unreduced result the next operation builds. */
  charge(numeratorBits: number, denominatorBits: number): void {
    this.spent += (numeratorBits + 64) * (denominatorBits + 64);
    if (this.spent > MAX_WORK) {
      throw new ArithmeticError(
        `the expression needs more work than the calculator allows (limit ${MAX_WORK.toExponential()} bit-operations, which a few operations on fractions with thousand-digit denominators reach); split it into smaller calculations`,
      );
    }
  }
}

const bits = (r: Rational) => ({ n: bitLength(r.n), d: bitLength(r.d) });

/** The four operations, metered: every one is charged before its BigInt work runs. */
class Arithmetic {
  constructor(private readonly meter: WorkMeter) {}

  add(a: Rational, b: Rational): Rational {
    const x = bits(a);
    const y = bits(b);
    this.meter.charge(Math.max(x.n + y.d, y.n + x.d) + 1, x.d + y.d);
    return guard(make(a.n * b.d + b.n * a.d, a.d * b.d));
  }
  sub(a: Rational, b: Rational): Rational {
    return this.add(a, { n: -b.n, d: b.d });
  }
  mul(a: Rational, b: Rational): Rational {
    const x = bits(a);
    const y = bits(b);
    this.meter.charge(x.n + y.n, x.d + y.d);
    return guard(make(a.n * b.n, a.d * b.d));
  }
  div(a: Rational, b: Rational): Rational {
    const x = bits(a);
    const y = bits(b);
    this.meter.charge(x.n + y.d, x.d + y.n);
    return guard(make(a.n * b.d, a.d * b.n));
  }
  mod(a: Rational, b: Rational): Rational {
    if (b.n === 0n) throw new ArithmeticError('modulo by zero');
    const x = bits(a);
    const y = bits(b);
    this.meter.charge(x.n + y.d, x.d + y.n);
    const q = (a.n * b.d) / (a.d * b.n);
    return this.sub(a, this.mul(b, { n: q, d: 1n }));
  }
  pow(a: Rational, b: Rational): Rational {
    if (b.d !== 1n) throw new ArithmeticError('exponents must be whole numbers');
    if (abs(b.n) > MAX_EXPONENT) throw new ArithmeticError(`exponent too large (at most ${MAX_EXPONENT})`);
    const e = b.n < 0n ? -b.n : b.n;
    // Estimated before computing: building a million-digit power and only then
    // measuring it is what blocked the event loop for over half a second.
    const x = bits(a);
    const lowerBound = Math.max(0, Math.max(x.n, x.d) - 1) * Number(e);
    if (digitsOf(lowerBound) > MAX_DIGITS + 1) throw tooLarge(digitsOf(lowerBound));
    // A power of a reduced fraction is already reduced: no gcd, only the multiplications.
    this.meter.charge(x.n * Number(e), 0);
    this.meter.charge(x.d * Number(e), 0);
    const r = guard({ n: a.n ** e, d: a.d ** e });
    return b.n < 0n ? this.div({ n: 1n, d: 1n }, r) : r;
  }
}
const MAX_EXPONENT = 1000n;

function parseNumber(text: string): Rational {
  const m = /^(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(text);
  if (!m || (m[1] === '' && (m[2] ?? '') === '')) throw new ArithmeticError(`invalid number "${text}"`);
  const whole = m[1] ?? '';
  const frac = m[2] ?? '';
  const exp = Number(m[3] ?? '0');
  if (Math.abs(exp) > 1000) throw new ArithmeticError('exponent too large');
  let n = BigInt((whole || '0') + frac);
  let d = 10n ** BigInt(frac.length);
  if (exp > 0) n *= 10n ** BigInt(exp);
  if (exp < 0) d *= 10n ** BigInt(-exp);
  return make(n, d);
}

class Parser {
  private pos = 0;
  private readonly math = new Arithmetic(new WorkMeter());
  constructor(private readonly src: string) {}

  parse(): Rational {
    const value = this.expr();
    this.skip();
    if (this.pos < this.src.length) throw new ArithmeticError(`unexpected "${this.src[this.pos]}" at position ${this.pos + 1}`);
    return value;
  }
  private skip(): void {
    while (this.pos < this.src.length && /\s/.test(this.src[this.pos] as string)) this.pos++;
  }
  private peek(): string | undefined {
    this.skip();
    return this.src[this.pos];
  }
  private expr(): Rational {
    let left = this.term();
    for (let op = this.peek(); op === '+' || op === '-'; op = this.peek()) {
      this.pos++;
      const right = this.term();
      left = op === '+' ? this.math.add(left, right) : this.math.sub(left, right);
    }
    return left;
  }
  private term(): Rational {
    let left = this.unary();
    for (let op = this.peek(); op === '*' || op === '/' || op === '%'; op = this.peek()) {
      this.pos++;
      const right = this.unary();
      left = op === '*' ? this.math.mul(left, right) : op === '/' ? this.math.div(left, right) : this.math.mod(left, right);
    }
    return left;
  }
  private unary(): Rational {
    const c = this.peek();
    if (c === '-') {
      this.pos++;
      const v = this.unary();
      return { n: -v.n, d: v.d };
    }
    if (c === '+') {
      this.pos++;
      return this.unary();
    }
    return this.power();
  }
  private power(): Rational {
    const base = this.atom();
    if (this.peek() === '^') {
      this.pos++;
      return this.math.pow(base, this.unary());
    }
    return base;
  }
  private atom(): Rational {
    const c = this.peek();
    if (c === '(') {
      this.pos++;
      const v = this.expr();
      if (this.peek() !== ')') throw new ArithmeticError(`missing ")" at position ${this.pos + 1}`);
      this.pos++;
      return v;
    }
    const m = /^(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?/.exec(this.src.slice(this.pos));
    if (!m) throw new ArithmeticError(c === undefined ? 'unexpected end of expression' : `unexpected "${c}" at position ${this.pos + 1}`);
    this.pos += m[0].length;
    return parseNumber(m[0]);
  }
}

/** Decimal expansion when it terminates within `maxFraction` digits, else null. */
export function toDecimal(r: Rational, maxFraction = 50): string | null {
  let d = r.d;
  let twos = 0;
  let fives = 0;
  while (d % 2n === 0n) { d /= 2n; twos++; }
  while (d % 5n === 0n) { d /= 5n; fives++; }
  if (d !== 1n) return null;
  const digits = Math.max(twos, fives);
  if (digits > maxFraction) return null;
  const scaled = abs(r.n) * 10n ** BigInt(digits) / r.d;
  const s = scaled.toString().padStart(digits + 1, '0');
  const intPart = s.slice(0, s.length - digits);
  const fracPart = digits ? `.${s.slice(s.length - digits)}` : '';
  return `${r.n < 0n ? '-' : ''}${intPart}${fracPart}`;
}

/** Rounded decimal with `places` fraction digits (half away from zero). */
export function toRounded(r: Rational, places = 20): string {
  const scale = 10n ** BigInt(places);
  const scaled = (abs(r.n) * scale * 2n + r.d) / (2n * r.d);
  const s = scaled.toString().padStart(places + 1, '0');
  const out = `${s.slice(0, s.length - places)}.${s.slice(s.length - places)}`.replace(/\.?0+$/, '');
  return `${r.n < 0n && scaled !== 0n ? '-' : ''}${out}`;
}

export function evaluateExact(expression: string): Rational {
  if (expression.length > 1000) throw new ArithmeticError('expression longer than 1000 characters');
  return new Parser(expression).parse();
}
