import type { ToolCall } from './chat-message';
import { FailureType } from './failure-types';
import { checkJsonBounds } from './json-bounds';
import { MODEL_OUTPUT_LIMITS } from './model-output-limits';
import { checkJsonSchema, type CheckOptions } from './json-schema-check';
import { checkJsonSchemaLegacy } from './json-schema-check-legacy';
import type { ToolPolicy } from './session-types';
import type { RiskLevel, ToolSpec } from './tool-spec';

/** What the workflow will do with one tool call the model asked for. */
export type ToolCallPlan =
  | {
      kind: 'run';
      call: ToolCall;
      spec: ToolSpec;
      args: Record<string, unknown>;
      needsConfirmation: boolean;
      /** The risk of this call: the spec's, or `external` when its `externalWhen` rule matches the arguments. */
      risk: RiskLevel;
    }
  | { kind: 'reject'; call: ToolCall; errorType: FailureType; detail: string; args: unknown };

/**
 * Confirmation rule: destructive and external always, tools that ask for it,
 * the session's extra list, and writes when the policy says so. `risk` is the
 * call's own risk (see `callRisk`), the spec's by default.
 */
export function needsConfirmation(spec: ToolSpec, policy: ToolPolicy, risk: RiskLevel = spec.risk): boolean {
  if (risk === 'destructive' || risk === 'external' || spec.requiresConfirmation) return true;
  if (policy.confirmTools.includes(spec.name)) return true;
  return risk === 'write' && policy.confirmWrites;
}

/** The risk of one call: `external` when the spec's `externalWhen` argument is present and not empty; pure. */
export function callRisk(spec: Pick<ToolSpec, 'risk' | 'externalWhen'>, args: Record<string, unknown>): RiskLevel {
  if (!spec.externalWhen || spec.risk === 'destructive') return spec.risk;
  const value = args[spec.externalWhen.argument];
  const present = Array.isArray(value) ? value.length > 0 : typeof value === 'string' ? value.trim() !== '' : value !== undefined && value !== null;
  return present ? 'external' : spec.risk;
}

export function isAllowed(name: string, policy: ToolPolicy): boolean {
  return policy.allow === undefined || policy.allow.includes(name);
}

/**
 * Which schema checker plans a call: `full` (JSON Schema as servers write it,
 * patterns left to the tool activity's RE2) or `legacy`, the subset that runs
 * before patch `tool-args-full-json-schema` (see react-turn.ts).
 */
export type SchemaDialect = 'full' | 'legacy';

/** The shape of a tool's arguments in one line, for messages the model reads. */
export function briefSchema(spec: Pick<ToolSpec, 'parameters'>): string {
  // A server's schema is anything JSON can hold: every value is read so that no shape of it can throw here.
  const props = (spec.parameters.properties ?? {}) as Record<string, { type?: unknown; format?: unknown } | null | undefined>;
  const required = requiredNames(spec.parameters.required);
  const fields = Object.entries(props).map(([key, p]) => {
    const type = typeText(p?.type);
    const format = typeof p?.format === 'string' ? ` (${p.format})` : '';
    return `${key}${required.has(key) ? '' : '?'}: ${type}${format}`;
  });
  return `{ ${fields.join(', ')} }`;
}

/** The names `required` lists, as a set; an empty one when it is not a list of names (a number is not iterable). */
function requiredNames(required: unknown): Set<unknown> {
  try {
    return new Set((required ?? []) as Iterable<unknown>);
  } catch {
    return new Set();
  }
}

/** A property's `type` as text: `a|b` for a list, `any` when absent or when it has no text form (an object whose toString is not a function). */
function typeText(type: unknown): string {
  try {
    return Array.isArray(type) ? type.join('|') : String(type ?? 'any');
  } catch {
    return 'any';
  }
}

/**
 * Decides, without side effects, whether a call may run: known name, on the
 * session's allow-list, arguments that parse and fit the schema. Rejections
 * carry the text the model will read.
 */
/** A call whose arguments the model activity emptied, and which limit they were over. */
export interface TruncatedCall {
  chars: number;
  /**
   * Absent in results recorded before it was added: those were read as over one call's limit. `cut`: the model's
   * answer ended (its output limit, or the session stopped reading) before this call's arguments came.
   */
  over?: 'call' | 'response' | 'cut';
}

function truncatedReason({ chars, over }: TruncatedCall): string {
  if (over === 'cut') {
    return "the model's answer was cut off before this call's arguments came (its output limit, or more than one step keeps), so the call was not run; send it again with all of its arguments";
  }
  if (over === 'response') {
    return `the arguments are ${chars} characters long, more than was left of the ${MODEL_OUTPUT_LIMITS.maxTotalArgumentChars} characters all calls of one response may take together; make fewer or smaller calls in one step`;
  }
  // The text as it was before `over` existed: results recorded then replay to the same conversation.
  return `the arguments are ${chars} characters long, over the limit for one call`;
}

export function planToolCall(
  call: ToolCall,
  tools: ReadonlyMap<string, ToolSpec>,
  policy: ToolPolicy,
  truncated?: TruncatedCall,
  dialect: SchemaDialect = 'full',
  /** Asked only when needed: `checkCostly` and `linearUrl` of json-schema-check.ts's CheckOptions. */
  check: Pick<CheckOptions, 'checkCostly' | 'linearUrl'> = {},
): ToolCallPlan {
  const name = call.function.name;
  const spec = tools.get(name);
  if (!spec) {
    const errorType = isAllowed(name, policy) ? FailureType.ToolNotFound : FailureType.ToolNotAllowed;
    const detail =
      errorType === FailureType.ToolNotAllowed
        ? `The tool "${name}" is not allowed in this session.`
        : `No tool named "${name}" exists. Available tools: ${[...tools.keys()].sort().join(', ') || 'none'}.`;
    return { kind: 'reject', call, errorType, detail, args: call.function.arguments };
  }
  if (!isAllowed(name, policy)) {
    return { kind: 'reject', call, errorType: FailureType.ToolNotAllowed, detail: `The tool "${name}" is not allowed in this session.`, args: call.function.arguments };
  }
  const tooBig = truncated !== undefined ? truncatedReason(truncated) : checkJsonBounds(call.function.arguments)?.message;
  if (tooBig) {
    return {
      kind: 'reject',
      call,
      errorType: FailureType.ToolInputInvalid,
      detail: `The arguments were not accepted: ${tooBig}. Send a smaller, flatter JSON object shaped like ${briefSchema(spec)}.`,
      args: '',
    };
  }
  let parsed: unknown;
  try {
    parsed = call.function.arguments.trim() === '' ? {} : JSON.parse(call.function.arguments);
  } catch (err) {
    return {
      kind: 'reject',
      call,
      errorType: FailureType.ToolInputInvalid,
      detail: `The arguments are not valid JSON (${(err as Error).message}). Send one JSON object shaped like ${briefSchema(spec)}.`,
      args: call.function.arguments,
    };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    return { kind: 'reject', call, errorType: FailureType.ToolInputInvalid, detail: `The arguments must be a JSON object shaped like ${briefSchema(spec)}.`, args: parsed };
  }
  const issues = dialect === 'full' ? checkJsonSchema(parsed, spec.parameters, check) : checkJsonSchemaLegacy(parsed, spec.parameters);
  if (issues.length > 0) {
    const list = issues.map((i) => `${i.path} ${i.message}`).join('; ');
    return { kind: 'reject', call, errorType: FailureType.ToolInputInvalid, detail: `Invalid arguments: ${list}. Expected ${briefSchema(spec)}.`, args: parsed };
  }
  const args = parsed as Record<string, unknown>;
  // needsConfirmation follows the spec's risk; the workflow applies the call's
  // own risk behind a patch (react-turn.ts, TOOL_RISK_PER_CALL).
  return { kind: 'run', call, spec, args, needsConfirmation: needsConfirmation(spec, policy), risk: callRisk(spec, args) };
}
