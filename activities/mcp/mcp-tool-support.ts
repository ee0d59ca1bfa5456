import type { Tool } from '@modelcontextprotocol/sdk/types.js';

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
  return undefined;
}
