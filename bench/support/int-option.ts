/** A `--name` command-line value as an integer in [min, max]; throws a message naming the option otherwise. */
export function intOption(name: string, value: string, min: number, max: number): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max) throw new Error(`--${name} must be an integer from ${min} to ${max}, got ${value}`);
  return n;
}
