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

const MAX_DIGITS = 2_000;

function guard(r: Rational): Rational {
  if (r.n.toString().length > MAX_DIGITS || r.d.toString().length > MAX_DIGITS) {
    throw new ArithmeticError(`result exceeds ${MAX_DIGITS} digits`);
  }
  return r;
}

const add = (a: Rational, b: Rational) => guard(make(a.n * b.d + b.n * a.d, a.d * b.d));
const sub = (a: Rational, b: Rational) => guard(make(a.n * b.d - b.n * a.d, a.d * b.d));
const mul = (a: Rational, b: Rational) => guard(make(a.n * b.n, a.d * b.d));
const div = (a: Rational, b: Rational) => guard(make(a.n * b.d, a.d * b.n));
function mod(a: Rational, b: Rational): Rational {
  if (b.n === 0n) throw new ArithmeticError('modulo by zero');
  const q = (a.n * b.d) / (a.d * b.n);
  return sub(a, mul(b, { n: q, d: 1n }));
}
function pow(a: Rational, b: Rational): Rational {
  if (b.d !== 1n) throw new ArithmeticError('exponents must be whole numbers');
  if (abs(b.n) > 1000n) throw new ArithmeticError('exponent too large (at most 1000)');
  const e = b.n < 0n ? -b.n : b.n;
  const r = guard(make(a.n ** e, a.d ** e));
  return b.n < 0n ? div({ n: 1n, d: 1n }, r) : r;
}

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
      left = op === '+' ? add(left, right) : sub(left, right);
    }
    return left;
  }
  private term(): Rational {
    let left = this.unary();
    for (let op = this.peek(); op === '*' || op === '/' || op === '%'; op = this.peek()) {
      this.pos++;
      const right = this.unary();
      left = op === '*' ? mul(left, right) : op === '/' ? div(left, right) : mod(left, right);
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
      return pow(base, this.unary());
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
