import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { auth, extractWWWAuthenticateParams } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { McpLogger } from './mcp-log';
import { errorText } from './mcp-log';
import { McpOAuthProvider, type McpOAuthServer } from './mcp-oauth-provider';
import type { McpOAuthStore, PendingAuthorization } from './mcp-oauth-store';

export interface AuthorizeOptions {
  server: McpOAuthServer;
  store: McpOAuthStore;
  /** Lines for the person at the terminal (already redacted where needed; no secrets are passed here). */
  print: (line: string) => void;
  /** Gives up waiting for the browser's redirect after this long. */
  timeoutMs: number;
  /** Starts a new authorization even if the store has tokens. */
  force?: boolean;
  log: McpLogger;
}

export type AuthorizeOutcome = { status: 'authorized' | 'already-authorized'; tools: number };

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** The server's answer to an unauthenticated initialize: where its protected-resource metadata is and which scope it wants. */
async function probe(url: string): Promise<{ resourceMetadataUrl?: URL; scope?: string }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'durable-agent-authorize', version: '0.1.0' } } }),
  });
  await res.body?.cancel();
  if (res.status !== 401) return {};
  const { resourceMetadataUrl, scope } = extractWWWAuthenticateParams(res);
  return { resourceMetadataUrl, scope };
}

/** Connects with the stored grant and lists tools: proof that the worker will get in. */
async function verify(server: McpOAuthServer, provider: McpOAuthProvider): Promise<number> {
  const transport = new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: server.headers }, authProvider: provider });
  const client = new Client({ name: 'durable-agent-authorize', version: '0.1.0' });
  try {
    await client.connect(transport, { timeout: 10_000 });
    const { tools } = await client.listTools(undefined, { timeout: 10_000 });
    await transport.terminateSession().catch(() => undefined);
    return tools.length;
  } finally {
    await client.close().catch(() => undefined);
  }
}

function page(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' }).end(`${text}\n`);
}

/**
 * Completes the OAuth flow for one server, as the person who may grant it:
 * listens on the configured (loopback) redirect URL, prints the URL to open
 * (the one a worker already logged, if it is still fresh), checks the
 * redirect's `state`, exchanges the code with the PKCE verifier (the SDK's
 * `auth()`, as `finishAuth` does) and stores the tokens for every worker.
 */
export async function authorizeMcpServer(options: AuthorizeOptions): Promise<AuthorizeOutcome> {
  const { server, store, print } = options;
  const name = server.name;
  const redirect = new URL(server.oauth.redirectUrl);
  if (redirect.protocol !== 'http:' || !LOOPBACK.has(redirect.hostname)) {
    throw new Error(`MCP server "${name}": oauth.redirectUrl ${redirect.origin} is not a loopback http URL, so this command cannot receive the redirect`);
  }
  const provider = new McpOAuthProvider(store, server, { mode: 'authorize', log: options.log, onAuthorizationUrl: (url) => print(`Open this URL in a browser to authorize "${name}":\n\n  ${url.href}\n`) });
  const current = await provider.current();
  if (current?.tokens && !options.force) {
    try {
      const tools = await verify(server, provider);
      print(`"${name}" is already authorized (${tools} tools); use --force to authorize again.`);
      return { status: 'already-authorized', tools };
    } catch (err) {
      print(`The stored grant for "${name}" did not work (${errorText(err)}); authorizing again.`);
    }
  }

  let settle!: { resolve: (code: string) => void; reject: (err: Error) => void };
  const code = new Promise<string>((resolve, reject) => (settle = { resolve, reject }));
  const callback = createServer((req: IncomingMessage, res: ServerResponse) => {
    void (async () => {
      const url = new URL(req.url ?? '/', redirect.origin);
      if (url.pathname !== redirect.pathname) return page(res, 404, 'Not the authorization callback.');
      const error = url.searchParams.get('error');
      if (error) {
        page(res, 400, `Authorization was refused: ${error}. You can close this tab.`);
        return settle.reject(new Error(`the authorization server refused: ${error}${url.searchParams.get('error_description') ? ` (${url.searchParams.get('error_description')})` : ''}`));
      }
      const pending = (await provider.current())?.pending;
      const given = url.searchParams.get('state');
      const got = url.searchParams.get('code');
      if (!pending || !given || given !== pending.state || !got) {
        // Another tab, an old URL, or a forged request: not ours to exchange.
        return page(res, 400, 'This authorization does not match the one in progress (state differs). Open the latest URL the command printed.');
      }
      page(res, 200, `Authorized "${name}". You can close this tab.`);
      settle.resolve(got);
    })().catch((err: unknown) => {
      if (!res.headersSent) page(res, 500, 'The callback failed; see the terminal.');
      settle.reject(err instanceof Error ? err : new Error(String(err)));
    });
  });
  await new Promise<void>((resolve, reject) => {
    callback.once('error', (err: NodeJS.ErrnoException) =>
      reject(new Error(`cannot listen on ${redirect.host} for the redirect (${err.code ?? err.message}); is another mcp:authorize running?`)),
    );
    callback.listen(Number(redirect.port || 80), redirect.hostname.replace(/^\[|\]$/g, ''), () => resolve());
  });
  const timer = setTimeout(() => settle.reject(new Error(`no redirect arrived within ${Math.round(options.timeoutMs / 1000)} s`)), options.timeoutMs);
  try {
    const found = await probe(server.url);
    const fresh = (p: PendingAuthorization | undefined) => p !== undefined && Date.now() - p.createdAt.getTime() < server.oauth.pendingTtlMs;
    const pending = (await provider.current())?.pending;
    if (fresh(pending) && !options.force) {
      print(`Open this URL in a browser to authorize "${name}":\n\n  ${pending!.authorizationUrl}\n`);
    } else {
      // Discovery, registration and PKCE are the SDK's; the provider prints the URL and keeps the verifier.
      const result = await auth(provider, { serverUrl: server.url, ...found });
      if (result === 'AUTHORIZED') {
        const tools = await verify(server, provider);
        print(`"${name}" is authorized (${tools} tools).`);
        return { status: 'authorized', tools };
      }
    }
    print(`Waiting for the redirect on ${redirect.origin}${redirect.pathname} ...`);
    const authorizationCode = await code;
    const result = await auth(provider, { serverUrl: server.url, authorizationCode, ...found });
    if (result !== 'AUTHORIZED') throw new Error('the authorization server did not issue tokens');
    const tools = await verify(server, provider);
    print(`"${name}" is authorized (${tools} tools). Workers connect on their own; sessions reuse this grant.`);
    return { status: 'authorized', tools };
  } finally {
    clearTimeout(timer);
    const closed = new Promise<void>((resolve) => callback.close(() => resolve()));
    callback.closeAllConnections();
    await closed;
  }
}
