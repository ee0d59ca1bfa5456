import { Validator } from '@cfworker/json-schema';
import { z } from 'zod';
import { Principal } from './principal';
import { builtOnce } from './built-once';

/**
 * Elicitation as the session sees it: an MCP server asked the user for input
 * in the middle of a tool call (`elicitation/create`). The tool activity
 * signals the question (`inputRequested`), the person answers with
 * `answerInput`, and the activity reads the answer back with the `getInput`
 * query. Every bound here is a bound on what reaches history and events.
 */

/** Bounds on a question and its answer. */
export const INPUT_LIMITS = {
  messageChars: 2_000,
  schemaBytes: 8_000,
  properties: 30,
  stringChars: 4_000,
  arrayItems: 100,
  /** Inputs remembered per run (answered ones of running calls included). */
  remembered: 100,
} as const;

/**
 * Checks an accepted answer against the server's schema with a full JSON
 * Schema validator that needs no code generation (safe in the workflow
 * sandbox). The schema itself was bounded and stripped of patterns when the
 * question came in. Returns the problems, none when it fits.
 */
export function checkAnswer(schema: Record<string, unknown>, content: InputContent): string[] {
  let result: ReturnType<Validator['validate']>;
  try {
    result = new Validator(schema as never, '2020-12', false).validate(content);
  } catch (err) {
    return [`the server's schema could not be applied (${err instanceof Error ? err.message : String(err)})`];
  }
  if (result.valid) return [];
  return result.errors
    .filter((e) => e.keyword !== 'properties' && e.keyword !== 'allOf')
    .slice(0, 10)
    .map((e) => `${e.instanceLocation === '#' ? '(content)' : e.instanceLocation.replace(/^#\//, '')}: ${e.error}`);
}

/** What MCP allows in one property of an elicitation schema (its primitive schemas, titled and multi-select enums). */
const PROPERTY_KEYWORDS = new Set(['type', 'title', 'description', 'default', 'enum', 'enumNames', 'minLength', 'maxLength', 'minimum', 'maximum', 'format', 'oneOf', 'anyOf', 'items', 'minItems', 'maxItems']);
const ITEMS_KEYWORDS = new Set(['type', 'enum', 'oneOf', 'anyOf']);
const STRING_FORMATS = new Set(['email', 'uri', 'date', 'date-time']);

/** `oneOf`/`anyOf` as MCP's titled enums use them: options of `const` and `title` only. */
function titledOptionsProblem(options: unknown): string | undefined {
  if (!Array.isArray(options)) return 'must be a list of { const, title } options';
  for (const option of options) {
    if (typeof option !== 'object' || option === null || Array.isArray(option)) return 'must be a list of { const, title } options';
    const extra = Object.keys(option).find((k) => k !== 'const' && k !== 'title');
    if (extra !== undefined) return `options may hold only const and title, not ${JSON.stringify(extra.slice(0, 64))}`;
  }
  return undefined;
}

/**
 * Why one property's schema is not one MCP allows in elicitation, or
 * undefined when it is. The answer is checked against the schema inside
 * the workflow, so a schema may hold no keyword that makes the check
 * costly: references and combinators (`allOf` of the same `$ref` twice,
 * nested, doubles the work at each level: 2 KB of schema, a check that
 * never ends), conditionals, or a format other than MCP's four (the `url`
 * format's regular expression takes exponential time).
 */
export function elicitationPropertyProblem(prop: Record<string, unknown>): string | undefined {
  for (const key of Object.keys(prop)) {
    if (!PROPERTY_KEYWORDS.has(key)) return `${JSON.stringify(key.slice(0, 64))} is not a keyword MCP allows in an elicitation schema`;
  }
  if (prop.format !== undefined && !STRING_FORMATS.has(String(typeof prop.format === 'string' ? prop.format : ''))) return 'format must be email, uri, date or date-time';
  for (const key of ['oneOf', 'anyOf'] as const) {
    if (prop[key] === undefined) continue;
    const problem = titledOptionsProblem(prop[key]);
    if (problem) return `${key} ${problem}`;
  }
  if (prop.items !== undefined) {
    const items = prop.items;
    if (typeof items !== 'object' || items === null || Array.isArray(items)) return 'items must be an object';
    for (const key of Object.keys(items)) if (!ITEMS_KEYWORDS.has(key)) return `items may hold only type, enum, oneOf and anyOf, not ${JSON.stringify(key.slice(0, 64))}`;
    for (const key of ['oneOf', 'anyOf'] as const) {
      const options = (items as Record<string, unknown>)[key];
      if (options === undefined) continue;
      const problem = titledOptionsProblem(options);
      if (problem) return `items.${key} ${problem}`;
    }
  }
  return undefined;
}

/** The first property of a requested schema that MCP does not allow (see `elicitationPropertyProblem`), named. */
export function elicitationSchemaProblem(schema: { properties: Record<string, Record<string, unknown>> }): string | undefined {
  for (const [key, prop] of Object.entries(schema.properties)) {
    const problem = elicitationPropertyProblem(prop);
    if (problem) return `properties.${key.slice(0, 128)}: ${problem}`;
  }
  return undefined;
}

/** A property's `type` as `String` gives it, or '' when it has no text form (an object whose toString is not a function). */
function typeName(type: unknown): string {
  try {
    return String(type);
  } catch {
    return '';
  }
}

const schemas = builtOnce('input-request', () => {
  /** `<toolCallId>:<n>`: the n-th question of that call, the same on every attempt of it. */
  const InputId = z.string().min(3).max(300).regex(/^.+:\d{1,4}$/, 'expected "<toolCallId>:<n>"');

  /** The flat object schema MCP allows in `requestedSchema`: primitive properties only, no nesting. */
  const RequestedSchema = z
    .object({
      type: z.literal('object'),
      properties: z.record(z.string().max(128), z.record(z.string(), z.unknown())),
      required: z.array(z.string().max(128)).max(INPUT_LIMITS.properties).optional(),
    })
    .superRefine((schema, ctx) => {
      const keys = Object.keys(schema.properties);
      if (keys.length > INPUT_LIMITS.properties) ctx.addIssue({ code: 'custom', message: `at most ${INPUT_LIMITS.properties} properties` });
      const bytes = JSON.stringify(schema).length;
      if (bytes > INPUT_LIMITS.schemaBytes) ctx.addIssue({ code: 'custom', message: `the schema is ${bytes} characters, over ${INPUT_LIMITS.schemaBytes}` });
      for (const [key, prop] of Object.entries(schema.properties)) {
        // Patterns would run inside the workflow task; MCP's primitive schemas have none, so none are taken.
        if (JSON.stringify(prop).includes('"pattern"')) ctx.addIssue({ code: 'custom', path: ['properties', key], message: 'patterns are not accepted' });
        if (!['string', 'number', 'integer', 'boolean', 'array'].includes(typeName(prop.type))) {
          ctx.addIssue({ code: 'custom', path: ['properties', key], message: 'type must be string, number, integer, boolean or array (of enum strings)' });
        }
      }
    });

  /** Sent by the tool activity when its server elicits (see `inputRequestedSignal`). */
  const InputRequestedInput = z.object({
    turnId: z.string().min(1).max(64),
    toolCallId: z.string().min(1).max(256),
    inputId: InputId,
    /** The MCP server that asks. */
    server: z.string().min(1).max(128),
    message: z.string().max(INPUT_LIMITS.messageChars),
    requestedSchema: RequestedSchema,
    /** How long the tool call can still wait, from the activity's remaining time; the wait is the shorter of this and the confirmation timeout. */
    waitMs: z.number().int().min(1).max(7 * 24 * 3600_000),
  });

  const InputAction = z.enum(['accept', 'decline', 'cancel']);

  /** The values MCP allows in an elicitation answer. */
  const InputContent = z
    .record(
      z.string().max(128),
      z.union([z.string().max(INPUT_LIMITS.stringChars), z.number().finite(), z.boolean(), z.array(z.string().max(INPUT_LIMITS.stringChars)).max(INPUT_LIMITS.arrayItems)]),
    )
    .refine((c) => Object.keys(c).length <= INPUT_LIMITS.properties, `at most ${INPUT_LIMITS.properties} fields`);

  /** A person's answer (`answerInput` signal or update). `content` goes with `accept` only. */
  const AnswerInputInput = z
    .object({
      inputId: InputId,
      action: InputAction,
      content: InputContent.optional(),
      /** Who answers: the owner, or an approver or admin of the owner's tenant. */
      principal: Principal.optional(),
    })
    .refine((a) => a.action === 'accept' || a.content === undefined, { message: 'content goes with action "accept" only', path: ['content'] });

  const GetInputInput = z.object({ inputId: InputId });

  /** A question waiting for a person, as `getSession` and `input_required` show it. */
  const PendingInput = z.object({
    inputId: z.string(),
    turnId: z.string(),
    toolCallId: z.string(),
    toolName: z.string(),
    server: z.string(),
    message: z.string(),
    requestedSchema: z.record(z.string(), z.unknown()),
    requestedAt: z.string(),
    expiresAt: z.string(),
  }).meta({ id: 'PendingInput' });

  /** Who ended the wait: a person, the timeout, or the tool call ending first (interrupt, failure). */
  const InputAnsweredBy = z.enum(['user', 'timeout', 'call_ended']);
  return { InputId, RequestedSchema, InputRequestedInput, InputAction, InputContent, AnswerInputInput, GetInputInput, PendingInput, InputAnsweredBy };
});

export const { InputId, RequestedSchema, InputRequestedInput, InputAction, InputContent, AnswerInputInput, GetInputInput, PendingInput, InputAnsweredBy } = schemas;
export type RequestedSchema = z.infer<typeof RequestedSchema>;
export type InputRequestedInput = z.infer<typeof InputRequestedInput>;
export type InputAction = z.infer<typeof InputAction>;
export type InputContent = z.infer<typeof InputContent>;
export type AnswerInputInput = z.infer<typeof AnswerInputInput>;
export type GetInputInput = z.infer<typeof GetInputInput>;
export type PendingInput = z.infer<typeof PendingInput>;
export type InputAnsweredBy = z.infer<typeof InputAnsweredBy>;
/** What the `getInput` query answers the tool activity. */
export type InputState =
  | { state: 'unknown' }
  | { state: 'pending'; expiresAt: string }
  | { state: 'answered'; action: InputAction; content?: InputContent; answeredBy: InputAnsweredBy };
