import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ToolSchema, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

/** A bound on pages, so a server that always returns a cursor cannot keep us listing. */
const MAX_TOOL_PAGES = 50;

/**
 * How deeply a tool's schemas may nest (objects and arrays, counted from the
 * tool). Real schemas nest a few levels; every check of a schema (ours, the
 * model's) walks it recursively, and `{"not":{"not":…}}` 2,000 levels deep
 * (19 KB) overflowed the worker's stack while the catalog was built, so the
 * worker did not start, or, listed later, every turn failed.
 */
export const MAX_TOOL_NESTING = 64;

/** One page as listed: the tools are checked one by one (below), not as a whole. */
const ToolsPage = z.looseObject({ tools: z.array(z.unknown()), nextCursor: z.string().optional() });

/** A tool the server listed that is not offered, and why. */
export interface RefusedTool {
  name: string;
  why: string;
}

/** True when `value` nests deeper than `max` (walked without recursion, so any depth is safe to ask about). */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (typeof node !== 'object' || node === null) continue;
    if (depth > max) return true;
    for (const child of Array.isArray(node) ? node : Object.values(node)) {
      if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
    }
  }
  return false;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * A listed schema with what servers commonly send that the MCP SDK's strict
 * check refuses, though the tool works: `"required": null` (a Go nil slice),
 * no `type` at the root, and boolean subschemas under `properties` (valid
 * JSON Schema 2020-12: `true` takes anything, `false` nothing).
 */
function repairedSchema(schema: unknown): unknown {
  if (!isObject(schema)) return schema;
  const fixed: Record<string, unknown> = { ...schema };
  if (fixed.required === null) delete fixed.required;
  fixed.type ??= 'object';
  if (isObject(fixed.properties)) {
    fixed.properties = Object.fromEntries(Object.entries(fixed.properties).map(([k, s]) => [k, s === true ? {} : s === false ? { not: {} } : s]));
  }
  return fixed;
}

const describeIssue = (error: z.core.$ZodError | { issues: ReadonlyArray<{ path: PropertyKey[]; message: string }> }): string =>
  error.issues
    .slice(0, 3)
    .map((i) => `${i.path.map(String).join('.') || '(tool)'}: ${i.message}`)
    .join('; ');

/** One listed tool, checked on its own: a malformed tool is refused, and the rest of the server's tools stay. */
export function checkListedTool(listed: unknown): { tool: Tool } | { refused: RefusedTool } {
  const name = isObject(listed) && typeof listed.name === 'string' ? listed.name.slice(0, 200) : '(no name)';
  if (nestsDeeperThan(listed, MAX_TOOL_NESTING)) {
    return { refused: { name, why: `its schemas nest deeper than ${MAX_TOOL_NESTING} levels: no check could walk them safely` } };
  }
  const candidate = isObject(listed)
    ? { ...listed, inputSchema: repairedSchema(listed.inputSchema), ...(listed.outputSchema !== undefined ? { outputSchema: repairedSchema(listed.outputSchema) } : {}) }
    : listed;
  const parsed = ToolSchema.safeParse(candidate);
  if (!parsed.success) return { refused: { name, why: `its listing does not follow the MCP schema for a tool (${describeIssue(parsed.error)})` } };
  return { tool: parsed.data as Tool };
}

/**
 * Every tool the server offers, following `nextCursor` page by page. The
 * SDK's `listTools` checks a page as a whole: one malformed tool (or one it
 * is stricter about than the spec) failed the listing, so the server never
 * came up, or kept a stale list. Here each tool is checked on its own; the
 * ones refused are returned with the reason. (Their output schemas are
 * checked by the connection, `McpConnection.callTool`, not by the SDK.)
 */
export async function listAllTools(client: Client, timeoutMs: number): Promise<{ tools: Tool[]; refused: RefusedTool[] }> {
  const tools: Tool[] = [];
  const refused: RefusedTool[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_TOOL_PAGES; page++) {
    const result = await client.request({ method: 'tools/list', ...(cursor ? { params: { cursor } } : {}) }, ToolsPage, { timeout: timeoutMs });
    for (const listed of result.tools) {
      const checked = checkListedTool(listed);
      if ('tool' in checked) tools.push(checked.tool);
      else refused.push(checked.refused);
    }
    cursor = result.nextCursor;
    if (!cursor) break;
  }
  return { tools, refused };
}
