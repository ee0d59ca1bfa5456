import type { SchemaIssue } from './json-schema-check';

/**
 * The hand-written subset of JSON Schema that checked tool arguments before
 * patch `tool-args-full-json-schema`. Kept, unchanged in what it accepts and
 * rejects, for runs that planned tool calls before that patch: their
 * histories replay only if the same calls are rejected. Do not use it for
 * anything new (no `$ref`, `oneOf` read as `anyOf`, and it runs a server's
 * `pattern` with the JavaScript engine).
 */

type Schema = Record<string, unknown>;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function typeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

function matchesType(value: unknown, type: string): boolean {
  const actual = typeOf(value);
  if (type === 'number') return actual === 'number' || actual === 'integer';
  return actual === type;
}

const DATE_TIME = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}:?\d{2})?$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
/**
 * What `/^[^\s@]+@[^\s@]+\.[^\s@]+$/` accepted, in one pass: that expression went back over a domain of many dots
 * from each of them (quadratic in the model's value). No blank, one "@" with something before it, and a dot after it
 * that is neither the domain's first nor its last character.
 */
function isEmail(value: string): boolean {
  if (/\s/.test(value)) return false;
  const at = value.indexOf('@');
  if (at < 1 || value.indexOf('@', at + 1) >= 0) return false;
  const domain = value.slice(at + 1);
  return domain.slice(1, -1).includes('.');
}

function checkFormat(value: string, format: string): string | null {
  switch (format) {
    case 'date-time':
      return DATE_TIME.test(value) && !Number.isNaN(Date.parse(value)) ? null : 'must be an ISO 8601 date-time such as 2025-03-18T14:00:00Z';
    case 'date':
      return DATE.test(value) ? null : 'must be a date in the form YYYY-MM-DD';
    case 'email':
      return isEmail(value) ? null : 'must be an email address such as ana@example.com';
    default:
      return null;
  }
}

function join(path: string, key: string | number): string {
  return path === '(root)' ? String(key) : `${path}.${key}`;
}

function check(value: unknown, schema: Schema, path: string, issues: SchemaIssue[]): void {
  if ('const' in schema && JSON.stringify(schema.const) !== JSON.stringify(value)) {
    issues.push({ path, message: `must be ${JSON.stringify(schema.const)}` });
    return;
  }
  if (Array.isArray(schema.enum) && !schema.enum.some((e) => JSON.stringify(e) === JSON.stringify(value))) {
    issues.push({ path, message: `must be one of ${schema.enum.map((e) => JSON.stringify(e)).join(', ')}` });
    return;
  }
  const variants = (Array.isArray(schema.anyOf) ? schema.anyOf : Array.isArray(schema.oneOf) ? schema.oneOf : null) as Schema[] | null;
  if (variants) {
    const fits = variants.some((variant) => {
      const sub: SchemaIssue[] = [];
      check(value, variant, path, sub);
      return sub.length === 0;
    });
    if (!fits) issues.push({ path, message: 'does not match any of the allowed shapes' });
    return;
  }
  if (schema.type !== undefined) {
    const types = (Array.isArray(schema.type) ? schema.type : [schema.type]) as string[];
    if (!types.some((t) => matchesType(value, t))) {
      issues.push({ path, message: `must be ${types.join(' or ')}, got ${typeOf(value)}` });
      return;
    }
  }
  if (typeof value === 'string') {
    if (typeof schema.minLength === 'number' && value.length < schema.minLength) {
      issues.push({ path, message: `must have at least ${schema.minLength} characters` });
    }
    if (typeof schema.maxLength === 'number' && value.length > schema.maxLength) {
      issues.push({ path, message: `must have at most ${schema.maxLength} characters` });
    }
    if (typeof schema.pattern === 'string' && !new RegExp(schema.pattern, 'u').test(value)) {
      issues.push({ path, message: `must match the pattern ${schema.pattern}` });
    }
    if (typeof schema.format === 'string') {
      const problem = checkFormat(value, schema.format);
      if (problem) issues.push({ path, message: problem });
    }
  }
  if (typeof value === 'number') {
    if (typeof schema.minimum === 'number' && value < schema.minimum) issues.push({ path, message: `must be >= ${schema.minimum}` });
    if (typeof schema.maximum === 'number' && value > schema.maximum) issues.push({ path, message: `must be <= ${schema.maximum}` });
    if (typeof schema.exclusiveMinimum === 'number' && value <= schema.exclusiveMinimum) {
      issues.push({ path, message: `must be > ${schema.exclusiveMinimum}` });
    }
    if (typeof schema.exclusiveMaximum === 'number' && value >= schema.exclusiveMaximum) {
      issues.push({ path, message: `must be < ${schema.exclusiveMaximum}` });
    }
  }
  if (Array.isArray(value)) {
    if (typeof schema.minItems === 'number' && value.length < schema.minItems) issues.push({ path, message: `must have at least ${schema.minItems} items` });
    if (typeof schema.maxItems === 'number' && value.length > schema.maxItems) issues.push({ path, message: `must have at most ${schema.maxItems} items` });
    if (isObject(schema.items)) {
      const itemSchema = schema.items;
      value.forEach((item, i) => check(item, itemSchema, join(path, i), issues));
    }
  }
  if (isObject(value)) {
    const properties = isObject(schema.properties) ? schema.properties : {};
    const required = Array.isArray(schema.required) ? (schema.required as string[]) : [];
    for (const key of required) {
      if (value[key] === undefined) issues.push({ path: join(path, key), message: 'is required' });
    }
    for (const [key, child] of Object.entries(value)) {
      const propSchema = properties[key];
      if (isObject(propSchema)) {
        check(child, propSchema, join(path, key), issues);
      } else if (schema.additionalProperties === false) {
        issues.push({ path: join(path, key), message: `is not a known field (known: ${Object.keys(properties).join(', ') || 'none'})` });
      } else if (isObject(schema.additionalProperties)) {
        check(child, schema.additionalProperties, join(path, key), issues);
      }
    }
  }
}

/** Checks `value` against `schema`; an empty list means it fits. */
export function checkJsonSchemaLegacy(value: unknown, schema: Record<string, unknown>): SchemaIssue[] {
  const issues: SchemaIssue[] = [];
  check(value, schema, '(root)', issues);
  return issues;
}
