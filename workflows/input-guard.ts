import { ApplicationFailure, log } from '@temporalio/workflow';
import type { z } from 'zod';
import { FailureType } from './failure-types';
import { isPatched } from './patches';
import { payloadBytes } from './payload-budget';

/**
 * Patch id: signals from people's clients (decideToolCall, interrupt,
 * endSession, answerInput) with fields their schema does not have are
 * ignored and counted, not taken without them; and `null` in an optional
 * field is taken as absent, not the whole signal ignored. Asked only for
 * such input.
 */
export const SIGNAL_FIELDS_CHECKED = 'signal-fields-checked';

/**
 * Bytes an update's input may take. An accepted update's input is written to
 * history and a rejected one is echoed back to the server in the rejection,
 * so the bound applies besides the schema (which drops unknown fields and
 * would otherwise accept a small message carrying megabytes beside it).
 */
export const MAX_UPDATE_INPUT_BYTES = 512 * 1024;

/** `path: message; ...` for every issue, so a caller sees each bad field at once. */
export function describeZodError(error: { issues: Array<{ path: PropertyKey[]; message: string }> }): string {
  return error.issues
    .slice(0, 10)
    .map((i) => `${i.path.length ? i.path.map(String).join('.') : '(input)'}: ${i.message}`)
    .join('; ');
}

/** The failure an update validator throws for input it cannot accept. */
export function invalidInput(message: string): ApplicationFailure {
  return ApplicationFailure.nonRetryable(message, FailureType.SessionInputInvalid);
}

/**
 * `schema.safeParse`, except that a check which throws (a refinement handed
 * a value it cannot turn into text, input nested deeper than the stack)
 * is a failed parse, named, rather than an exception: in a signal handler
 * that exception would fail every workflow task from then on.
 */
function parseSafely<T>(schema: z.ZodType<T>, raw: unknown): { data: T } | { problem: string } {
  try {
    const parsed = schema.safeParse(raw);
    return parsed.success ? { data: parsed.data } : { problem: describeZodError(parsed.error) };
  } catch (err) {
    return { problem: `(input): could not be checked (${err instanceof Error ? `${err.name}: ${err.message}` : 'a non-error was thrown'})` };
  }
}

type Def = { type: string; shape?: Record<string, z.ZodType>; innerType?: z.ZodType; in?: z.ZodType };
const defOf = (schema: z.ZodType): Def => (schema as unknown as { _zod: { def: Def } })._zod.def;

/** The object schema inside wrappers (optional, nullable, default, a pipe's input), or undefined when it is no object. */
function objectShape(schema: z.ZodType): Record<string, z.ZodType> | undefined {
  let def = defOf(schema);
  for (let depth = 0; depth < 10; depth++) {
    if (def.type === 'object') return def.shape;
    const inner = def.innerType ?? def.in;
    if (!inner) return undefined;
    def = defOf(inner);
  }
  return undefined;
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * What a person's input (from any SDK or the `temporal` CLI) holds beyond the
 * schema: `unknown` are the fields the schema does not have, dotted, with a
 * near name when there is one (`confirmationID` for `confirmationId`); `cleaned`
 * is the input with `null` taken as absent where the field is optional, as
 * other SDKs write an empty optional field (Python's None, Go's nil slice).
 * Only objects the schema describes as objects are looked into (a principal,
 * not an answer's free-form content).
 */
export function fieldsBeyond(schema: z.ZodType, raw: unknown, at = ''): { cleaned: unknown; unknown: string[] } {
  const shape = objectShape(schema);
  if (!shape || !isPlainObject(raw)) return { cleaned: raw, unknown: [] };
  const unknown: string[] = [];
  const cleaned: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(raw)) {
    const field = Object.prototype.hasOwnProperty.call(shape, key) ? shape[key] : undefined;
    if (!field) {
      const near = Object.keys(shape).find((k) => k.toLowerCase() === key.toLowerCase().replace(/_/g, ''));
      unknown.push(`${at}${key.slice(0, 64)}${near ? ` (did you mean ${at}${near}?)` : ''}`);
      continue;
    }
    if (value === null && field.safeParse(undefined).success) continue;
    const nested = fieldsBeyond(field, value, `${at}${key}.`);
    unknown.push(...nested.unknown);
    cleaned[key] = nested.cleaned;
  }
  return { cleaned, unknown: unknown.slice(0, 10) };
}

/** The refusal of fields a schema does not have: silently dropped, a misspelled `confirmationId` decided another call. */
function unknownFieldsProblem(unknown: string[]): string {
  return `${unknown.join(', ')}: unknown field${unknown.length === 1 ? '' : 's'}; field names are camelCase and exact`;
}

/**
 * Parses an update's input. `null` in an optional field is taken as absent.
 * In the validator (`strict`), fields the schema does not have are refused
 * by name: bad input is rejected before anything is written to history,
 * with every invalid field named. (Validators do not run on replay, and no
 * accepted input ever held a null where the handler now drops it.)
 */
export function parseUpdateInput<T>(schema: z.ZodType<T>, raw: unknown, name: string, options: { strict?: boolean } = {}): T {
  const bytes = payloadBytes(raw);
  const { cleaned, unknown } = fieldsBeyond(schema, raw);
  const parsed = parseSafely(schema, cleaned);
  const problems = [...(options.strict && unknown.length > 0 ? [unknownFieldsProblem(unknown)] : []), ...('problem' in parsed ? [parsed.problem] : [])];
  if (problems.length > 0 || 'problem' in parsed) throw invalidInput(`Invalid ${name} input: ${problems.join('; ')}`);
  if (!Number.isFinite(bytes)) throw invalidInput(`Invalid ${name} input: a value is nested too deeply to encode.`);
  if (bytes > MAX_UPDATE_INPUT_BYTES) throw invalidInput(`Invalid ${name} input: ${bytes} bytes; the limit is ${MAX_UPDATE_INPUT_BYTES} bytes.`);
  return parsed.data;
}

/**
 * Signals cannot be rejected, and a throw in a signal handler fails every
 * workflow task from then on (replay repeats it). So a signal's input is
 * parsed safely: what does not parse is logged, counted and ignored.
 */
export function parseSignalInput<T>(schema: z.ZodType<T>, raw: unknown, name: string, onIgnored: (reason: string) => void, options: { fromPeople?: boolean } = {}): T | undefined {
  const parsed = parseSafely(schema, raw);
  let problem = 'problem' in parsed ? parsed.problem : undefined;
  if (options.fromPeople) {
    // Signals from people's clients: fields the schema does not have are refused, and null is an optional field
    // left empty. Runs from before took the first and ignored the second; asked only for such input, they replay so.
    const { cleaned, unknown } = fieldsBeyond(schema, raw);
    if (unknown.length > 0) {
      if (problem !== undefined) problem = `${problem}; ${unknownFieldsProblem(unknown)}`;
      else if (isPatched(SIGNAL_FIELDS_CHECKED)) problem = unknownFieldsProblem(unknown);
    } else if (problem !== undefined && cleaned !== raw) {
      const again = parseSafely(schema, cleaned);
      if ('data' in again && isPatched(SIGNAL_FIELDS_CHECKED)) return again.data;
    }
  }
  if (problem === undefined && 'data' in parsed) return parsed.data;
  const reason = `invalid ${name} input: ${problem ?? '(input): could not be read'}`;
  log.warn(`Ignoring a signal: ${reason}`, { signal: name });
  onIgnored(reason);
  return undefined;
}
