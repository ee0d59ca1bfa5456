import { format as formats } from '@cfworker/json-schema';
import { RE2 } from 're2-wasm';
import { checkJsonSchema, mapSubschemas, schemaHasPatterns, type SchemaIssue } from '../../workflows/json-schema-check';

/**
 * The `pattern` half of argument checking. The workflow checks every other
 * keyword (it must never run a server's regular expression, see
 * `workflows/json-schema-check.ts`); the tool activity calls this before it
 * runs the tool. Patterns run in RE2, whose time is linear in the input, so
 * `^(a+)+$` against a long string of a's costs microseconds, not years.
 *
 * Each `pattern` becomes a format of the same validator, backed by RE2, so
 * it keeps its meaning inside `anyOf`, `oneOf`, `not` and `$ref`. A pattern
 * RE2 cannot compile (lookaround, backreferences) is left to the tool or
 * server, which validates on its own. `patternProperties` stays unchecked
 * here as in the workflow (names are matched by the server).
 */

const COMPILED_KEPT = 500;
const compiled = new Map<string, RE2 | null>();

function re2(pattern: string): RE2 | null {
  const known = compiled.get(pattern);
  if (known !== undefined) return known;
  let regex: RE2 | null = null;
  try {
    regex = new RE2(pattern, 'u');
  } catch {
    regex = null;
  }
  if (compiled.size >= COMPILED_KEPT) compiled.delete(compiled.keys().next().value as string);
  compiled.set(pattern, regex);
  return regex;
}

/** Format names cannot collide with real ones: a server's format is a plain word. */
const FORMAT_PREFIX = 'x-re2-pattern:';

/**
 * Whether each schema object has a pattern, found once: a tool's schema is
 * the same object for every call until its catalog changes, and walking it
 * on every call cost about 0.05 ms.
 */
const hasPatterns = new WeakMap<object, boolean>();

function withPatterns(schema: Record<string, unknown>): boolean {
  let has = hasPatterns.get(schema);
  if (has === undefined) {
    has = schemaHasPatterns(schema);
    hasPatterns.set(schema, has);
  }
  return has;
}

/** Issues from the schema's patterns (and anything else that fails now); empty when the arguments fit. */
export function checkArgumentPatterns(args: unknown, schema: Record<string, unknown>): SchemaIssue[] {
  if (!withPatterns(schema)) return [];
  const registered: string[] = [];
  const messages: Record<string, string> = {};
  const withFormats = mapSubschemas(schema, (node) => {
    if (typeof node.pattern !== 'string') return node;
    const { pattern, ...rest } = node as { pattern: string } & Record<string, unknown>;
    const regex = re2(pattern);
    if (!regex) return rest;
    const name = `${FORMAT_PREFIX}${registered.length}`;
    registered.push(name);
    messages[name] = `must match the pattern ${pattern}`;
    formats[name] = (value: string) => regex.test(value);
    const check = { format: name };
    // The node may have a format of its own: the pattern joins it through allOf.
    return rest.format === undefined ? { ...rest, ...check } : { ...rest, allOf: [...(Array.isArray(rest.allOf) ? rest.allOf : []), check] };
  }) as Record<string, unknown>;
  try {
    // The validator is synchronous: the formats registered above are the ones it sees, and gone before anything else runs.
    return checkJsonSchema(args, withFormats, { formatMessages: messages });
  } finally {
    for (const name of registered) delete formats[name];
  }
}
