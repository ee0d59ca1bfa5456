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
 * Parses an update's input in its validator: bad input is rejected before
 * anything is written to history, with every invalid field named.
 */
export function parseUpdateInput<T>(schema: z.ZodType<T>, raw: unknown, name: string): T {
  const bytes = payloadBytes(raw);
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw invalidInput(`Invalid ${name} input: ${describeZodError(parsed.error)}`);
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
  const parsed = schema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const reason = `invalid ${name} input: ${describeZodError(parsed.error)}`;
  log.warn(`Ignoring a signal: ${reason}`, { signal: name });
  onIgnored(reason);
  return undefined;
}
