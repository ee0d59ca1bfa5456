import { dereference, format as formats, validate, type OutputUnit, type Schema, type SchemaDraft } from '@cfworker/json-schema';

/**
 * Checks tool arguments against the tool's JSON Schema inside the workflow
 * sandbox, so invalid calls are caught before a confirmation is asked for or
 * an activity is scheduled. The dialect is the full one servers use (drafts
 * 4, 7, 2019-09 and 2020-12: `$ref`, `$defs`, `oneOf` exclusivity, `if`/`then`,
 * `dependentRequired`, ...), through @cfworker/json-schema, an interpreter
 * that needs no code generation and no Node built-ins.
 *
 * A server's schema is untrusted input, and a regular expression in it can
 * take exponential time in a backtracking engine: one such `pattern` would
 * stall the workflow task, on every retry and every replay. So regular
 * expressions never run here. `pattern` is left out of the check, and so is
 * `patternProperties` (with the `additionalProperties` beside it, which
 * depends on which names match): the tool activity checks patterns with
 * RE2, in linear time, before it runs the tool
 * (`activities/tools/argument-patterns.ts`).
 */
export interface SchemaIssue {
  /** Dotted path to the offending value, `(root)` for the arguments object itself. */
  path: string;
  message: string;
}

export interface CheckOptions {
  /**
   * Messages for formats the caller registered with the validator (the
   * activity's RE2 patterns): format name -> what the value must do.
   */
  formatMessages?: Readonly<Record<string, string>>;
  /**
   * Asked only for a schema too costly to check (IN_PLACE_BUDGET): true checks
   * it anyway. The workflow answers true for runs from before such schemas
   * were left unchecked, so they replay as they ran.
   */
  checkCostly?: () => boolean;
  /**
   * Asked only for a schema with `format: "url"`: true checks it with the
   * linear check (LINEAR_URL_FORMAT) rather than the validator's own regular
   * expression. Absent means true; the workflow answers false for runs from
   * before, so they replay as they ran.
   */
  linearUrl?: () => boolean;
}

/**
 * The validator's `url` format is a regular expression with nested
 * quantifiers: a 30-character host without a dot that then fails (
 * `http://intranetdocumentationserver01 `) takes seconds, and each character
 * more doubles it. In the workflow that is a task that never ends, on every
 * retry and every replay. `url` is checked by this instead, in time linear in
 * the value: an http, https or ftp URL with a host of dotted labels ending in
 * a top-level domain of letters, or a public IPv4 address, an optional port
 * and path, and no whitespace, as the expression meant.
 */
export const LINEAR_URL_FORMAT = 'x-durable-agent-url';

const PRIVATE_IPV4 = [(a: number) => a === 10, (a: number) => a === 127, (a: number, b: number) => a === 169 && b === 254, (a: number, b: number) => a === 192 && b === 168, (a: number, b: number) => a === 172 && b >= 16 && b <= 31];
const LABEL = /^[a-z0-9\u00a1-\uffff](?:[a-z0-9\u00a1-\uffff-]*[a-z0-9\u00a1-\uffff])?$/iu;
const TOP_LEVEL = /^[a-z\u00a1-\uffff]{2,}$/iu;

export function isWebUrl(value: string): boolean {
  const scheme = /^(?:https?|ftp):\/\//i.exec(value);
  if (!scheme || /\s/u.test(value)) return false;
  const rest = value.slice(scheme[0].length);
  const slash = rest.indexOf('/');
  let authority = slash === -1 ? rest : rest.slice(0, slash);
  const at = authority.lastIndexOf('@');
  if (at !== -1) authority = authority.slice(at + 1);
  const colon = authority.lastIndexOf(':');
  let host = authority;
  if (colon !== -1) {
    if (!/^\d{2,5}$/.test(authority.slice(colon + 1))) return false;
    host = authority.slice(0, colon);
  }
  if (host.length === 0 || host.length > 253) return false;
  const labels = host.split('.');
  if (labels.length === 4 && labels.every((l) => /^\d{1,3}$/.test(l))) {
    const [a = 0, b = 0, c = 0, d = 0] = labels.map(Number);
    if (a < 1 || a > 223 || b > 255 || c > 255 || d < 1 || d > 254) return false;
    return !PRIVATE_IPV4.some((isPrivate) => isPrivate(a, b));
  }
  if (labels.length < 2 || labels.some((l) => l.length > 63 || !LABEL.test(l))) return false;
  return TOP_LEVEL.test(labels[labels.length - 1] ?? '');
}

formats[LINEAR_URL_FORMAT] = isWebUrl;

/** At most this many issues are reported; the model fixes the first ones first. */
const MAX_ISSUES = 12;

type Node = Record<string, unknown>;
const isObject = (v: unknown): v is Node => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Keywords whose value is one subschema, an array of them, or a map of them. */
const ONE = ['additionalProperties', 'unevaluatedProperties', 'propertyNames', 'additionalItems', 'unevaluatedItems', 'contains', 'not', 'if', 'then', 'else', 'items'];
const MANY = ['allOf', 'anyOf', 'oneOf', 'prefixItems', 'items'];
const MAP = ['properties', '$defs', 'definitions', 'dependentSchemas', 'dependencies', 'patternProperties'];

/** A copy of `schema` with `visit` applied to every subschema object, children first. */
export function mapSubschemas(schema: unknown, visit: (node: Node) => Node): unknown {
  if (!isObject(schema)) return schema;
  const copy: Node = { ...schema };
  for (const key of ONE) if (isObject(copy[key])) copy[key] = mapSubschemas(copy[key], visit);
  for (const key of MANY) if (Array.isArray(copy[key])) copy[key] = (copy[key] as unknown[]).map((s) => mapSubschemas(s, visit));
  for (const key of MAP) {
    const map = copy[key];
    if (!isObject(map)) continue;
    copy[key] = Object.fromEntries(Object.entries(map).map(([k, s]) => [k, Array.isArray(s) ? s : mapSubschemas(s, visit)]));
  }
  return visit(copy);
}

/** True when the schema holds a regular expression a validator would run (`pattern`, `patternProperties`). */
export function schemaHasPatterns(schema: unknown): boolean {
  let found = false;
  mapSubschemas(schema, (node) => {
    if (typeof node.pattern === 'string' || isObject(node.patternProperties)) found = true;
    return node;
  });
  return found;
}

/** The schema without the keywords that run a server's regular expressions (see the module comment). */
export function withoutPatterns(schema: unknown): unknown {
  let hadPatternProperties = false;
  const stripped = mapSubschemas(schema, (node) => {
    const { pattern: _pattern, ...rest } = node;
    if (isObject(rest.patternProperties)) {
      hadPatternProperties = true;
      // Which names are "additional" depends on the patterns: loosen rather than reject a field the patterns allow.
      delete rest.patternProperties;
      delete rest.additionalProperties;
    }
    return rest;
  });
  if (!hadPatternProperties) return stripped;
  // unevaluatedProperties may depend on patternProperties anywhere beneath it.
  return mapSubschemas(stripped, ({ unevaluatedProperties: _u, ...rest }) => rest);
}

function draftOf(schema: unknown): SchemaDraft {
  const declared = isObject(schema) && typeof schema.$schema === 'string' ? schema.$schema : '';
  if (declared.includes('draft-04')) return '4';
  if (declared.includes('draft-06') || declared.includes('draft-07')) return '7';
  if (declared.includes('2019-09')) return '2019-09';
  // MCP: a tool schema without `$schema` is JSON Schema 2020-12.
  return '2020-12';
}

function typeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

function decodeSegment(segment: string): string {
  let decoded = segment;
  try {
    decoded = decodeURI(segment);
  } catch {
    // keep it as written
  }
  return decoded.replace(/%23/g, '#').replace(/~1/g, '/').replace(/~0/g, '~');
}

function segments(location: string): string[] {
  return location.replace(/^#/, '').split('/').slice(1).map(decodeSegment);
}

function pathOf(instanceLocation: string): string {
  const parts = segments(instanceLocation);
  return parts.length === 0 ? '(root)' : parts.join('.');
}

function join(path: string, key: string): string {
  return path === '(root)' ? key : `${path}.${key}`;
}

/** The schema value at a keyword location, following `$ref` through the lookup. */
function schemaAt(root: unknown, lookup: Record<string, Schema | boolean>, keywordLocation: string): unknown {
  let node: unknown = root;
  for (const segment of segments(keywordLocation)) {
    if (Array.isArray(node)) {
      node = node[Number(segment)];
      continue;
    }
    if (!isObject(node)) return undefined;
    if (segment === '$ref' && typeof node.$ref === 'string') {
      const absolute = (node as { __absolute_ref__?: string }).__absolute_ref__;
      node = lookup[absolute ?? node.$ref];
      continue;
    }
    node = node[segment];
  }
  return node;
}

function valueAt(instance: unknown, instanceLocation: string): unknown {
  let node: unknown = instance;
  for (const segment of segments(instanceLocation)) {
    if (Array.isArray(node)) node = node[Number(segment)];
    else if (isObject(node)) node = node[segment];
    else return undefined;
  }
  return node;
}

function formatProblem(format: string): string {
  switch (format) {
    case 'date-time':
      return 'must be an ISO 8601 date-time with an offset, such as 2025-03-18T14:00:00Z';
    case 'date':
      return 'must be a date in the form YYYY-MM-DD';
    case 'time':
      return 'must be a time with an offset, such as 14:00:00Z';
    case 'email':
      return 'must be an email address such as ana@example.com';
    case 'uri':
    case 'url':
    case LINEAR_URL_FORMAT:
      return 'must be an absolute URI such as https://example.com/page';
    case 'uuid':
      return 'must be a UUID such as 123e4567-e89b-12d3-a456-426614174000';
    default:
      return `must be a valid ${format}`;
  }
}

/** A short description of one allowed shape, for `anyOf`/`oneOf` messages. */
function shapeHint(variant: unknown, lookup: Record<string, Schema | boolean>, options: CheckOptions, depth = 0): string {
  if (!isObject(variant)) return variant === false ? 'nothing' : 'anything';
  if (typeof variant.$ref === 'string' && depth < 3) {
    const absolute = (variant as { __absolute_ref__?: string }).__absolute_ref__;
    return shapeHint(lookup[absolute ?? variant.$ref], lookup, options, depth + 1);
  }
  if (typeof variant.format === 'string') {
    const registered = options.formatMessages?.[variant.format];
    return registered ? `a string that ${registered}` : `a ${variant.format === LINEAR_URL_FORMAT ? 'url' : variant.format} string`;
  }
  if ('const' in variant) return JSON.stringify(variant.const);
  if (Array.isArray(variant.enum)) return `one of ${variant.enum.map((e) => JSON.stringify(e)).join(', ')}`;
  if (isObject(variant.properties)) {
    const required = new Set(Array.isArray(variant.required) ? (variant.required as string[]) : []);
    const fields = Object.entries(variant.properties).map(([key, p]) => {
      const fixed = isObject(p) && 'const' in p ? `: ${JSON.stringify(p.const)}` : '';
      return `${key}${required.has(key) ? '' : '?'}${fixed}`;
    });
    return `{ ${fields.join(', ')} }`;
  }
  if (variant.type !== undefined) return Array.isArray(variant.type) ? variant.type.join(' or ') : String(variant.type);
  return 'a value of another shape';
}

function shapesHint(variants: unknown, lookup: Record<string, Schema | boolean>, options: CheckOptions): string {
  if (!Array.isArray(variants) || variants.length === 0) return '';
  const hints = variants.slice(0, 5).map((v) => shapeHint(v, lookup, options));
  const text = `expected one of: ${hints.join(' | ')}${variants.length > 5 ? ' | …' : ''}`;
  return ` (${text.length > 400 ? `${text.slice(0, 399)}…` : text})`;
}

/** Quoted name in a cfworker message (`Property "x" …`, `required property "x".`). */
function quoted(error: string, pattern: RegExp): string | undefined {
  return pattern.exec(error)?.[1];
}

/*
 * The two messages below name properties of the tool's schema, which an MCP server writes: a name holding
 * 'required property "' 12,000 times took `/required property "(.*)"\.$/` minutes, as it went back over the message
 * from each of them, in the workflow task. These read them in one pass, with what those expressions captured: `.`
 * stops at a line break, and the match ends the message, so both look at its last line only.
 */

const lastLine = (text: string): string => text.slice(Math.max(text.lastIndexOf('\n'), text.lastIndexOf('\r'), text.lastIndexOf('\u2028'), text.lastIndexOf('\u2029')) + 1);
const REQUIRED = 'required property "';
const HAS = 'has "';
const BUT_NOT = '" but does not have "';

/** What `/required property "(.*)"\.$/` captured. */
export function requiredPropertyOf(error: string): string | undefined {
  const line = lastLine(error);
  const at = line.indexOf(REQUIRED);
  if (at < 0 || !line.endsWith('".') || line.length - 2 < at + REQUIRED.length) return undefined;
  return line.slice(at + REQUIRED.length, -2);
}

/** What `/has "(.*)" but does not have "(.*)"\.$/` captured: the first name, then the one it needs. */
export function dependencyOf(error: string): [string, string] | undefined {
  const line = lastLine(error);
  const at = line.indexOf(HAS);
  if (at < 0 || !line.endsWith('".')) return undefined;
  // The first name runs as far as it can (`.*` is greedy): to the last separator that leaves the closing '".'.
  const sep = line.lastIndexOf(BUT_NOT, line.length - 2 - BUT_NOT.length);
  if (sep < at + HAS.length) return undefined;
  return [line.slice(at + HAS.length, sep), line.slice(sep + BUT_NOT.length, -2)];
}

/** Keywords whose failure is only "a subschema had errors": the nested errors say what. */
const WRAPPERS = new Set(['$ref', '$recursiveRef', '$dynamicRef', 'properties', 'items', 'prefixItems', 'additionalItems', 'unevaluatedItems', 'allOf', 'dependentSchemas', 'if', 'patternProperties']);

function toIssues(errors: OutputUnit[], instance: unknown, root: unknown, lookup: Record<string, Schema | boolean>, options: CheckOptions): SchemaIssue[] {
  const issues: SchemaIssue[] = [];
  const seen = new Set<string>();
  const suppressed: string[] = [];
  const push = (path: string, message: string) => {
    const key = `${path}\u0000${message}`;
    if (seen.has(key)) return;
    seen.add(key);
    issues.push({ path, message });
  };
  const reportedPaths = new Set<string>();
  // A `false` schema's error carries no schema location: it belongs to the error just before it.
  let previousSuppressed = false;
  for (const error of errors) {
    const { keyword, keywordLocation, instanceLocation } = error;
    const isSuppressed: boolean = keyword === 'false' ? previousSuppressed : suppressed.some((s) => keywordLocation.startsWith(`${s}/`));
    previousSuppressed = isSuppressed;
    if (isSuppressed || WRAPPERS.has(keyword)) continue;
    const path = pathOf(instanceLocation);
    const value = schemaAt(root, lookup, keywordLocation);
    switch (keyword) {
      case 'false':
        if (!reportedPaths.has(path)) push(path, 'is not allowed here');
        break;
      case 'additionalProperties':
      case 'unevaluatedProperties': {
        const key = quoted(error.error, /^Property "(.*)" does not match/);
        if (value !== false || key === undefined) break;
        const parent = schemaAt(root, lookup, keywordLocation.slice(0, -keyword.length - 1));
        const known = isObject(parent) && isObject(parent.properties) ? Object.keys(parent.properties) : [];
        const childPath = join(path, key);
        reportedPaths.add(childPath);
        push(childPath, `is not a known field (known: ${known.join(', ') || 'none'})`);
        break;
      }
      case 'required': {
        const key = requiredPropertyOf(error.error);
        push(key === undefined ? path : join(path, key), 'is required');
        break;
      }
      case 'dependentRequired':
      case 'dependencies': {
        const pair = dependencyOf(error.error);
        if (pair) push(join(path, pair[1]), `is required when ${pair[0]} is given`);
        break;
      }
      case 'type': {
        const types = Array.isArray(value) ? (value as string[]) : [String(value)];
        push(path, `must be ${types.join(' or ')}, got ${typeOf(valueAt(instance, instanceLocation))}`);
        break;
      }
      case 'const':
        push(path, `must be ${JSON.stringify(value)}`);
        break;
      case 'enum':
        push(path, `must be one of ${Array.isArray(value) ? value.map((e) => JSON.stringify(e)).join(', ') : 'the allowed values'}`);
        break;
      case 'anyOf':
      case 'oneOf': {
        suppressed.push(keywordLocation);
        const matches = keyword === 'oneOf' ? Number(/\((\d+) matches\)/.exec(error.error)?.[1] ?? 0) : 0;
        const hint = shapesHint(value, lookup, options);
        push(path, matches > 1 ? `matches ${matches} of the allowed shapes but must match exactly one${hint}` : `does not match any of the allowed shapes${hint}`);
        break;
      }
      case 'not':
        suppressed.push(keywordLocation);
        push(path, `must not be ${shapeHint(value, lookup, options)}`);
        break;
      case 'propertyNames': {
        suppressed.push(keywordLocation);
        const key = quoted(error.error, /^Property name "(.*)" does not match/);
        push(path, `has a field name that is not allowed${key === undefined ? '' : `: "${key}"`}`);
        break;
      }
      case 'minLength':
        push(path, `must have at least ${String(value)} characters`);
        break;
      case 'maxLength':
        push(path, `must have at most ${String(value)} characters`);
        break;
      case 'minimum':
        push(path, `must be >= ${String(value)}`);
        break;
      case 'maximum':
        push(path, `must be <= ${String(value)}`);
        break;
      case 'exclusiveMinimum':
        push(path, typeof value === 'number' ? `must be > ${value}` : `must be more than the minimum`);
        break;
      case 'exclusiveMaximum':
        push(path, typeof value === 'number' ? `must be < ${value}` : `must be less than the maximum`);
        break;
      case 'multipleOf':
        push(path, `must be a multiple of ${String(value)}`);
        break;
      case 'minItems':
        push(path, `must have at least ${String(value)} items`);
        break;
      case 'maxItems':
        push(path, `must have at most ${String(value)} items`);
        break;
      case 'minProperties':
        push(path, `must have at least ${String(value)} fields`);
        break;
      case 'maxProperties':
        push(path, `must have at most ${String(value)} fields`);
        break;
      case 'uniqueItems': {
        const pair = /indexes (\d+) and (\d+)/.exec(error.error);
        push(path, `must not repeat items${pair ? ` (items ${pair[1]} and ${pair[2]} are equal)` : ''}`);
        break;
      }
      case 'pattern':
        push(path, `must match the pattern ${String(value)}`);
        break;
      case 'format': {
        const name = String(value);
        push(path, options.formatMessages?.[name] ?? formatProblem(name));
        break;
      }
      default:
        push(path, `does not fit the schema (${keyword}: ${error.error.replace(/\.$/, '')})`);
    }
    if (issues.length >= MAX_ISSUES) break;
  }
  return issues;
}

/** Copies plain JSON; the validator marks the schema objects it reads, and the catalog's must stay as they are. */
const cloneJson = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

/**
 * Checks `value` against `schema`; an empty list means it fits, or that the
 * schema could not be used (an unresolvable `$ref`, a broken `$id`): the
 * tool or server then validates on its own, as before.
 */
export function checkJsonSchema(value: unknown, schema: Record<string, unknown>, options: CheckOptions = {}): SchemaIssue[] {
  try {
    let made = prepared(schema, true);
    if (made.urlFormat && !(options.linearUrl?.() ?? true)) made = prepared(schema, false);
    const { root, lookup, draft, tooCostly } = made;
    if (tooCostly && !(options.checkCostly?.() ?? false)) return [];
    const result = validate(cloneJson(value) ?? null, root, draft, lookup, false);
    return result.valid ? [] : toIssues(result.errors, value, root, lookup, options);
  } catch {
    return [];
  }
}

/** A schema made ready to check against: copied, without its patterns, its references resolved. */
interface PreparedSchema {
  root: Schema;
  lookup: ReturnType<typeof dereference>;
  draft: SchemaDraft;
  /** Checking against it could take exponential time (see IN_PLACE_BUDGET): it is not checked here. */
  tooCostly: boolean;
  /** It has `format: "url"` somewhere (checked with LINEAR_URL_FORMAT when prepared so). */
  urlFormat: boolean;
}

/**
 * Subschemas one value is checked against where it stands, counted from any
 * node with every `$ref` followed: past this, the schema is not checked here.
 * The validator remembers no result, so `allOf: [{$ref: d1}, {$ref: d1}]`
 * nested 40 deep (2 KB of schema) is 2^40 checks of one value: a workflow
 * task that never ends. Real tool schemas stay far below (a few dozen).
 */
const IN_PLACE_BUDGET = 2_000;
/** Keywords whose subschemas apply to the same value as their parent's. */
const IN_PLACE_ONE = ['not', 'if', 'then', 'else'];
const IN_PLACE_MANY = ['allOf', 'anyOf', 'oneOf'];

/** True when some node of `root` applies more than IN_PLACE_BUDGET subschemas to one value, or applies itself. */
function tooCostlyToCheck(root: unknown, lookup: Record<string, Schema | boolean>): boolean {
  const counted = new Map<Node, number>();
  const open = new Set<Node>();
  const inPlace = (node: unknown): number => {
    if (!isObject(node)) return 0;
    const known = counted.get(node);
    if (known !== undefined) return known;
    // A schema that applies itself to the same value never ends (the validator would overflow its stack).
    if (open.has(node)) return Infinity;
    open.add(node);
    let total = 1;
    const add = (sub: unknown) => {
      if (total <= IN_PLACE_BUDGET) total += inPlace(sub);
    };
    if (typeof node.$ref === 'string') add(lookup[(node as { __absolute_ref__?: string }).__absolute_ref__ ?? node.$ref]);
    for (const key of IN_PLACE_ONE) add(node[key]);
    for (const key of IN_PLACE_MANY) if (Array.isArray(node[key])) for (const sub of node[key] as unknown[]) add(sub);
    if (isObject(node.dependentSchemas)) for (const sub of Object.values(node.dependentSchemas)) add(sub);
    open.delete(node);
    counted.set(node, total);
    return total;
  };
  // Every subschema, through every keyword: any of them may be where a value of the arguments is checked.
  const seen = new Set<Node>();
  const stack: unknown[] = [root, ...Object.values(lookup)];
  while (stack.length > 0) {
    const node = stack.pop();
    if (!isObject(node) || seen.has(node)) continue;
    seen.add(node);
    if (inPlace(node) > IN_PLACE_BUDGET) return true;
    for (const key of ONE) stack.push(node[key]);
    for (const key of MANY) if (Array.isArray(node[key])) stack.push(...(node[key] as unknown[]));
    for (const key of MAP) if (isObject(node[key])) stack.push(...Object.values(node[key]));
  }
  return false;
}

/** How many prepared schemas are kept: a session's tools, and then some. */
const PREPARED_KEPT = 64;
/** A schema longer than this as JSON is prepared at each check, not kept: the cache stays a few MB at most. */
const PREPARED_MAX_CHARS = 32_768;
const preparedByText = new Map<string, PreparedSchema>();

/**
 * The same tool's schema is checked at every call of it, and preparing it
 * (a copy, the patterns taken out, `$ref`s resolved) cost more than the check
 * itself. Prepared schemas are kept by their JSON text, not by object, so a
 * schema changed in place is prepared anew; the validator only reads them.
 */
function prepared(schema: Record<string, unknown>, linearUrl: boolean): PreparedSchema {
  const text = JSON.stringify(schema);
  const key = linearUrl ? text : `regex-url:${text}`;
  const kept = preparedByText.get(key);
  if (kept) {
    // Most recently used last: the first entry is the one to let go.
    preparedByText.delete(key);
    preparedByText.set(key, kept);
    return kept;
  }
  let urlFormat = false;
  const root = mapSubschemas(withoutPatterns(JSON.parse(text)), (node) => {
    if (node.format !== 'url') return node;
    urlFormat = true;
    return linearUrl ? { ...node, format: LINEAR_URL_FORMAT } : node;
  }) as Schema;
  const lookup = dereference(root);
  const made = { root, lookup, draft: draftOf(schema), tooCostly: tooCostlyToCheck(root, lookup), urlFormat };
  if (text.length > PREPARED_MAX_CHARS) return made;
  preparedByText.set(key, made);
  if (preparedByText.size > PREPARED_KEPT) preparedByText.delete(preparedByText.keys().next().value as string);
  return made;
}
