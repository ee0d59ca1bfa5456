import { createHash } from 'node:crypto';
import { z } from 'zod';
import { TOOL_NAME_PATTERN, type ToolCatalog, type ToolSpec } from '../../workflows/tool-spec';
import { DEFAULT_TOOL_TIMEOUT_MS, NATIVE_PREFIX, defaultMaxAttempts, type NativeTool, type ToolRunContext } from './native-tool';

export class ToolCatalogError extends Error {
  readonly type = 'ConfigInvalid';
  override readonly name = 'ToolCatalogError';
}

export function hashOf(value: unknown): string {
  return createHash('sha256').update(JSON.stringify(value)).digest('hex').slice(0, 16);
}

/** zod spells formats as long regexes; the model reads `format` and examples better, so the regex goes. */
function dropFormatPatterns(node: unknown): void {
  if (Array.isArray(node)) return node.forEach(dropFormatPatterns);
  if (typeof node !== 'object' || node === null) return;
  const record = node as Record<string, unknown>;
  if (typeof record.format === 'string' && typeof record.pattern === 'string') delete record.pattern;
  Object.values(record).forEach(dropFormatPatterns);
}

/** The JSON schema the model sees for a zod parameters object. */
export function toModelSchema(parameters: z.ZodObject): Record<string, unknown> {
  const schema = z.toJSONSchema(parameters, { io: 'input', target: 'draft-7' }) as Record<string, unknown>;
  delete schema.$schema;
  dropFormatPatterns(schema);
  return schema;
}

/** A tool that can be run: its spec plus the code or connection behind it. */
export interface RunnableTool {
  spec: ToolSpec;
  /** Validates and runs; `args` already passed the spec's schema in the workflow. */
  run(args: Record<string, unknown>, ctx: ToolRunContext): Promise<unknown>;
  /** Re-validates arguments with the tool's own schema before running. */
  parse(args: unknown): { ok: true; value: Record<string, unknown> } | { ok: false; message: string };
}

export function nativeRunnable(tool: NativeTool, defaults: { timeoutMs?: number } = {}): RunnableTool {
  const name = `${NATIVE_PREFIX}${tool.name}`;
  if (!TOOL_NAME_PATTERN.test(name)) throw new ToolCatalogError(`native tool name "${name}" must match ${TOOL_NAME_PATTERN}`);
  const parameters = toModelSchema(tool.parameters);
  const spec: ToolSpec = {
    name,
    description: tool.description,
    parameters,
    risk: tool.risk,
    ...(tool.externalWhen ? { externalWhen: tool.externalWhen } : {}),
    requiresConfirmation: tool.requiresConfirmation ?? false,
    timeoutMs: tool.timeoutMs ?? defaults.timeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS,
    maxAttempts: defaultMaxAttempts(tool),
    source: 'local',
    hash: hashOf({ d: tool.description, p: parameters }),
  };
  return {
    spec,
    run: (args, ctx) => tool.execute(args as never, ctx),
    parse(args) {
      const result = tool.parameters.safeParse(args);
      if (result.success) return { ok: true, value: result.data as Record<string, unknown> };
      return { ok: false, message: result.error.issues.map((i) => `${i.path.join('.') || '(arguments)'}: ${i.message}`).join('; ') };
    },
  };
}

/** Builds a catalog from tool sources; a duplicate name is an error naming both owners. */
export function buildCatalog(sources: Array<{ owner: string; tools: RunnableTool[] }>): { catalog: ToolCatalog; byName: Map<string, RunnableTool> } {
  const byName = new Map<string, RunnableTool>();
  const owners = new Map<string, string>();
  for (const source of sources) {
    for (const tool of source.tools) {
      const existing = owners.get(tool.spec.name);
      if (existing) {
        throw new ToolCatalogError(`tool name collision: "${tool.spec.name}" is defined by both ${existing} and ${source.owner}`);
      }
      owners.set(tool.spec.name, source.owner);
      byName.set(tool.spec.name, tool);
    }
  }
  const tools = [...byName.values()].map((t) => t.spec).sort((a, b) => a.name.localeCompare(b.name));
  return { catalog: { version: hashOf(tools.map((t) => [t.name, t.hash])), tools }, byName };
}
