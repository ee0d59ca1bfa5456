import { createHash } from 'node:crypto';

export const MCP_PREFIX = 'mcp_';
const MAX_NAME_LENGTH = 64;
const SUFFIX_LENGTH = 6;

/** Characters outside the model's function-name alphabet become `_`. */
export function sanitizeNamePart(part: string): string {
  return part.replace(/[^a-zA-Z0-9_-]/g, '_');
}

/**
 * The name the model sees for `tool` on `server`: `mcp_<server>_<tool>`,
 * matching `^[a-zA-Z0-9_-]{1,64}$`. A name too long is cut and given a short
 * hash of the original server and tool names, so two long names that share a
 * prefix stay apart. Names that still meet (e.g. `a.b` and `a_b`) are caught
 * as a collision when the catalog is built.
 */
export function mcpToolName(server: string, tool: string): string {
  const full = `${MCP_PREFIX}${sanitizeNamePart(server)}_${sanitizeNamePart(tool)}`;
  if (full.length <= MAX_NAME_LENGTH) return full;
  const suffix = createHash('sha256').update(`${server}\u0000${tool}`).digest('hex').slice(0, SUFFIX_LENGTH);
  return `${full.slice(0, MAX_NAME_LENGTH - SUFFIX_LENGTH - 1)}_${suffix}`;
}
