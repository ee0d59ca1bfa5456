import { randomUUID, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { recordEvent } from './event-log';
import { buildReportServer, type ReportServerState } from './report-server';

export interface HttpHostOptions {
  port: number;
  host?: string;
  /** When set, every request needs `Authorization: Bearer <token>`. */
  token?: string;
  path?: string;
}

function sendJsonRpcError(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
}

function readJson(req: IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      try {
        resolve(chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined);
      } catch (err) {
        reject(err);
      }
    });
    req.on('error', reject);
  });
}

function authorized(req: IncomingMessage, token: string | undefined): boolean {
  if (!token) return true;
  const expected = Buffer.from(`Bearer ${token}`);
  const given = Buffer.from(req.headers.authorization ?? '');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/**
 * Streamable HTTP hosting with one MCP session per client (Mcp-Session-Id).
 * `forgetSessions()` drops what it knows without telling clients, as a
 * restarted server behind a load balancer would: their next request gets 404.
 */
export async function startHttpHost(state: ReportServerState, options: HttpHostOptions): Promise<{ server: Server; url: string; forgetSessions(): void }> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const path = options.path ?? '/mcp';

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    if (new URL(req.url ?? '/', 'http://x').pathname !== path) return sendJsonRpcError(res, 404, `Not found; the MCP endpoint is ${path}`);
    if (!authorized(req, options.token)) {
      res.setHeader('www-authenticate', 'Bearer');
      return sendJsonRpcError(res, 401, 'Unauthorized: send Authorization: Bearer <token>');
    }
    const sessionId = req.headers['mcp-session-id'];
    const known = typeof sessionId === 'string' ? sessions.get(sessionId) : undefined;
    if (req.method !== 'POST') {
      if (!known) return sendJsonRpcError(res, typeof sessionId === 'string' ? 404 : 400, 'Session not found');
      return known.handleRequest(req, res);
    }
    const body = await readJson(req);
    if (known) return known.handleRequest(req, res, body);
    if (typeof sessionId === 'string') return sendJsonRpcError(res, 404, 'Session not found');
    if (!isInitializeRequest(body)) return sendJsonRpcError(res, 400, 'Bad request: no session; send initialize first');
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        sessions.set(id, transport);
      },
    });
    transport.onclose = () => {
      if (transport.sessionId && sessions.get(transport.sessionId) === transport) sessions.delete(transport.sessionId);
    };
    await buildReportServer(state).connect(transport);
    await transport.handleRequest(req, res, body);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) sendJsonRpcError(res, 500, err instanceof Error ? err.message : String(err));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host ?? '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    server,
    url: `http://${options.host ?? '127.0.0.1'}:${port}${path}`,
    forgetSessions() {
      recordEvent({ event: 'sessions_forgotten', count: sessions.size });
      sessions.clear();
    },
  };
}
