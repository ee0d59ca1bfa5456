import { ApplicationFailure, log } from '@temporalio/workflow';
import type { z } from 'zod';
import { FailureType } from './failure-types';
import { payloadBytes } from './payload-budget';

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

/**
 * Parses an update's input in its validator: bad input is rejected before
 * anything is written to history, with every invalid field named.
 */
export function parseUpdateInput<T>(schema: z.ZodType<T>, raw: unknown, name: string): T {
  const bytes = payloadBytes(raw);
  const parsed = parseSafely(schema, raw);
  if ('problem' in parsed) throw invalidInput(`Invalid ${name} input: ${parsed.problem}`);
  if (!Number.isFinite(bytes)) throw invalidInput(`Invalid ${name} input: a value is nested too deeply to encode.`);
  if (bytes > MAX_UPDATE_INPUT_BYTES) throw invalidInput(`Invalid ${name} input: ${bytes} bytes; the limit is ${MAX_UPDATE_INPUT_BYTES} bytes.`);
  return parsed.data;
}

/**
 * Signals cannot be rejected, and a throw in a signal handler fails every
 * workflow task from then on (replay repeats it). So a signal's input is
 * parsed safely: what does not parse is logged, counted and ignored.
 */
export function parseSignalInput<T>(schema: z.ZodType<T>, raw: unknown, name: string, onIgnored: (reason: string) => void): T | undefined {
  const parsed = parseSafely(schema, raw);
  if ('data' in parsed) return parsed.data;
  const reason = `invalid ${name} input: ${parsed.problem}`;
  log.warn(`Ignoring a signal: ${reason}`, { signal: name });
  onIgnored(reason);
  return undefined;
}
