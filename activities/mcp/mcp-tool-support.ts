import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { McpServerConfig } from './mcp-config';

/** The server's tools after its allow and deny lists. */
export function selectTools(server: Pick<McpServerConfig, 'allowTools' | 'denyTools'>, tools: readonly Tool[]): Tool[] {
  return tools.filter((t) => (server.allowTools === undefined || server.allowTools.includes(t.name)) && !server.denyTools.includes(t.name));
}

/**
 * Why this client cannot call `tool`, or undefined when it can. A tool that
 * declares `execution.taskSupport: "required"` (MCP 2025-11-25 tasks) must be
 * called as a task; the SDK refuses a plain `tools/call` for it (-32600), and
 * this client does not run tasks. Such a tool is left out of the catalog
 * rather than offered to a model that could never call it.
 */
export function unsupportedReason(tool: Tool): string | undefined {
  if (tool.execution?.taskSupport === 'required') {
    return 'it declares execution.taskSupport "required" (task-based execution, MCP 2025-11-25), which this client does not support; every call would fail with -32600';
  }
  const schemaChars = JSON.stringify(tool.inputSchema ?? {}).length;
  if (schemaChars > MAX_INPUT_SCHEMA_CHARS) {
    return `its input schema is ${schemaChars} characters of JSON, over ${MAX_INPUT_SCHEMA_CHARS}: it would be sent with every model call and kept in every session's history`;
  }
  return undefined;
}

/** An input schema longer than this as JSON is not offered. Real ones are a few KB. */
export const MAX_INPUT_SCHEMA_CHARS = 32_768;

/** Characters of a tool's description offered to the model; the rest is cut, marked. */
export const MAX_TOOL_DESCRIPTION_CHARS = 4_000;

/**
 * Tools offered from one server: OpenAI refuses a request with more than
 * 128 tools, and every one of them is in every model call.
 */
export const MAX_TOOLS_PER_SERVER = 128;

export function offeredDescription(description: string): string {
  if (description.length <= MAX_TOOL_DESCRIPTION_CHARS) return description;
  return `${description.slice(0, MAX_TOOL_DESCRIPTION_CHARS)} [description cut: ${description.length - MAX_TOOL_DESCRIPTION_CHARS} more characters]`;
}
