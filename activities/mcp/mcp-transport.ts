import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { RequestId } from '@modelcontextprotocol/sdk/types.js';
import type { McpServerConfig } from './mcp-config';
import type { McpLogger } from './mcp-log';
import { MAX_MCP_MESSAGE_BYTES, answerTooLargeResponse, boundedFetch } from './mcp-message-bounds';

/** One transport to one server, whichever kind it is. */
export interface McpTransportHandle {
  kind: 'stdio' | 'http';
  transport: Transport;
  /** The server process (stdio only). */
  pid(): number | null;
  /** The last lines the server wrote to stderr (stdio only), to explain an exit. */
  stderrTail(): string;
}

const STDERR_TAIL_CHARS = 2_000;

function stdioTransport(server: Extract<McpServerConfig, { type: 'stdio' }>, log: McpLogger): McpTransportHandle {
  const transport = new StdioClientTransport({
    command: server.command,
    args: server.args,
    env: { ...getDefaultEnvironment(), ...server.env },
    cwd: server.cwd,
    // Piped, not inherited: the server's chatter goes through our (redacting) logger.
    stderr: 'pipe',
    // The SDK's default (10 MB) closed the shared connection over one large result (mcp-message-bounds.ts).
    maxBufferSize: MAX_MCP_MESSAGE_BYTES,
  });
  let tail = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    const text = chunk.toString('utf8');
    tail = (tail + text).slice(-STDERR_TAIL_CHARS);
    for (const line of text.split('\n')) if (line.trim()) log.debug(`stderr: ${line}`);
  });
  return { kind: 'stdio', transport, pid: () => transport.pid, stderrTail: () => tail.trim() };
}

function httpTransport(server: Extract<McpServerConfig, { type: 'http' }>, authProvider?: OAuthClientProvider, maxMessageBytes = MAX_MCP_MESSAGE_BYTES): McpTransportHandle {
  // An answer past the bound fails its call, not the worker's memory. One streamed as server-sent events is failed
  // here: the SDK would only see its stream break, and the call would wait for its timeout.
  const tooLarge = (ids: RequestId[]) => {
    for (const id of ids) transport.onmessage?.(answerTooLargeResponse(id, maxMessageBytes));
  };
  const transport: StreamableHTTPClientTransport = new StreamableHTTPClientTransport(new URL(server.url), {
    requestInit: { headers: server.headers },
    fetch: boundedFetch(maxMessageBytes, fetch, tooLarge),
    // Sends the stored access token, and on a 401 refreshes it or starts an authorization (mcp-oauth-provider.ts).
    authProvider,
    // The standalone SSE stream (server notifications) retries briefly; after that the connection
    // probes the server and reconnects on its own schedule.
    reconnectionOptions: { initialReconnectionDelay: 250, maxReconnectionDelay: 2_000, reconnectionDelayGrowFactor: 2, maxRetries: 2 },
  });
  return { kind: 'http', transport, pid: () => null, stderrTail: () => '' };
}

/** `maxMessageBytes` (MAX_MCP_MESSAGE_BYTES unless a test sets it lower) bounds one answer over HTTP. */
export function createTransport(server: McpServerConfig, log: McpLogger, authProvider?: OAuthClientProvider, maxMessageBytes?: number): McpTransportHandle {
  return server.type === 'stdio' ? stdioTransport(server, log) : httpTransport(server, authProvider, maxMessageBytes);
}
