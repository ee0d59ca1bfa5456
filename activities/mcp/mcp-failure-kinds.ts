import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';

/** The server cannot be reached now; it is being reconnected in the background. */
export class McpUnavailableError extends Error {
  override readonly name = 'McpUnavailableError';
  constructor(readonly server: string, readonly reason: string) {
    super(`MCP server "${server}" is unavailable: ${reason}`);
  }
}

/** The HTTP server does not know our `Mcp-Session-Id` any more (it restarted, or expired the session). */
export function isSessionNotFound(err: unknown): boolean {
  return err instanceof StreamableHTTPError && err.code === 404;
}

/** A failure of the pipe itself, not an answer from the server. */
export function isConnectionFailure(err: unknown): boolean {
  if (err instanceof McpError) return err.code === ErrorCode.ConnectionClosed;
  if (err instanceof StreamableHTTPError) return err.code === undefined || err.code < 0 || err.code >= 500;
  return true;
}
