import { encodePayloadWire } from '@temporalio/workflow-streams/workflow';
import { defaultPayloadConverter } from '@temporalio/common';

/**
 * One argument as it travels on the wire: JSON text (or, rarely, bytes in
 * another encoding). Cases carry text, not objects, so an argument can be
 * anything another language's SDK or the `temporal` CLI could send, a
 * 20,000-deep nesting or a 4 MB string included, without the test process's
 * own JSON.stringify getting in the way.
 */
export interface RawArg {
  text: string;
  /** Payload `encoding` metadata; `json/plain` unless a case says otherwise. */
  encoding?: string;
}

export const json = (value: unknown): RawArg => ({ text: JSON.stringify(value) });
export const text = (jsonText: string): RawArg => ({ text: jsonText });

/** `[[[...]]]` or `{"a":{"a":...}}`, `depth` levels deep. */
export function deepJson(depth: number, shape: 'array' | 'object' = 'array'): string {
  return shape === 'array' ? '['.repeat(depth) + ']'.repeat(depth) : '{"a":'.repeat(depth) + 'null' + '}'.repeat(depth);
}

/** A JSON string literal of about `bytes` bytes. */
export const hugeString = (bytes: number): string => `"${'x'.repeat(Math.max(0, bytes - 2))}"`;

/** An object with `count` keys. */
export function manyKeys(count: number): string {
  const parts: string[] = [];
  for (let i = 0; i < count; i++) parts.push(`"k${i}":${i}`);
  return `{${parts.join(',')}}`;
}

/** One stream item as the stream library's publish signal carries it: a base64 Payload proto. */
export const wireItem = (value: unknown): string => encodePayloadWire(defaultPayloadConverter.toPayload(value));

/** A short, single-line description of an argument for reports. */
export function describeArg(arg: RawArg): string {
  const t = arg.text;
  const head = t.length > 60 ? `${t.slice(0, 40)}…(${t.length} chars)` : t;
  return arg.encoding && arg.encoding !== 'json/plain' ? `[${arg.encoding}] ${head}` : head;
}
