import { createHash } from 'node:crypto';

export const MCP_PREFIX = 'mcp_';
const MAX_NAME_LENGTH = 64;
const HASH_LENGTH = 6;
/** Characters of the server's own name kept, at least, when the tool's name is long. */
const MIN_SERVER_CHARS = 8;

/** Characters outside the model's function-name alphabet become `_`. */
export function sanitizeNamePart(part: string): string {
  return part.replace(/[^a-zA-Z0-9_-]/g, '_');
}

const shortHash = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, HASH_LENGTH);

/**
 * The name the model sees for `tool` on `server`: `mcp_<server>_<tool>`,
 * matching `^[a-zA-Z0-9_-]{1,64}$`. The tool's own name is what the model
 * reads to choose a tool, so a name too long is shortened in its server part
 * first: `mcp_<server cut>_<hash of the server name>_<tool>`, the hash keeping
 * two long server names that share a prefix apart. Only a tool name too long
 * to fit even then is cut itself, ending in a hash of both names. Names that
 * still meet (e.g. `a.b` and `a_b`) are caught as a collision when the
 * catalog is built. Names that fit are never changed.
 */
export function mcpToolName(server: string, tool: string): string {
  const serverPart = sanitizeNamePart(server);
  const toolPart = sanitizeNamePart(tool);
  const full = `${MCP_PREFIX}${serverPart}_${toolPart}`;
  if (full.length <= MAX_NAME_LENGTH) return full;
  // Room for the server part when the tool name is kept whole: mcp_ + server part + _ + tool.
  const room = MAX_NAME_LENGTH - MCP_PREFIX.length - 1 - toolPart.length;
  if (room >= MIN_SERVER_CHARS + 1 + HASH_LENGTH) {
    return `${MCP_PREFIX}${serverPart.slice(0, room - 1 - HASH_LENGTH)}_${shortHash(server)}_${toolPart}`;
  }
  const head = `${MCP_PREFIX}${serverPart.slice(0, MIN_SERVER_CHARS)}_${toolPart}`;
  return `${head.slice(0, MAX_NAME_LENGTH - 1 - HASH_LENGTH)}_${shortHash(`${server}\u0000${tool}`)}`;
}
