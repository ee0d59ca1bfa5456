import type { jsonSchemaValidator, JsonSchemaType, JsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
import { checkJsonSchema } from '../../workflows/json-schema-check';
import { checkArgumentPatterns } from '../tools/argument-patterns';

/**
 * Checks a tool's structured result against the output schema it declares,
 * for the MCP client (its default is ajv). A server writes these schemas, so
 * they are hostile input: ajv throws on a schema it cannot compile (and the
 * client then fails the whole listing, so one bad tool took its server
 * down), runs `pattern` on V8's backtracking engine (a pattern such as
 * `^(a+)+$` stalls the worker's thread), and keeps every compiled schema for
 * good (a server that relists without end grows the worker's memory). Here
 * an unusable schema checks nothing, patterns run on RE2, a schema whose
 * checks would multiply without bound is not checked, and prepared schemas
 * are kept in a small bounded cache (workflows/json-schema-check.ts).
 */
export const safeOutputValidator: jsonSchemaValidator = {
  getValidator<T>(schema: JsonSchemaType): JsonSchemaValidator<T> {
    const root = schema as Record<string, unknown>;
    return (input: unknown) => {
      const issues = [...checkJsonSchema(input, root), ...checkArgumentPatterns(input, root)];
      if (issues.length === 0) return { valid: true, data: input as T, errorMessage: undefined };
      return { valid: false, data: undefined, errorMessage: issues.slice(0, 5).map((i) => `${i.path || '(result)'} ${i.message}`).join('; ') };
    };
  },
};
