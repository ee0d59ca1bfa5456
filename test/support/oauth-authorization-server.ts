import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { ReportServerState, buildReportServer } from '../../examples/mcp-report-server/report-server';

/**
 * A small OAuth 2.1 authorization server of our own, on loopback, for tests:
 * metadata (RFC 8414), dynamic client registration (RFC 7591), an
 * authorization endpoint that approves a test user at once, and a token
 * endpoint for authorization_code (PKCE S256 checked) and refresh_token
 * (rotating). Tokens are opaque random strings that expire quickly.
 */
export interface OAuthServerOptions {
  accessTokenTtlMs?: number;
  scopes?: string[];
}

interface Client {
  client_id: string;
  client_secret?: string;
  redirect_uris: string[];
  token_endpoint_auth_method: string;
}
interface PendingCode {
  clientId: string;
  redirectUri: string;
  challenge: string;
  scope?: string;
  resource?: string;
  expiresAt: number;
}
interface AccessToken {
  clientId: string;
  scope?: string;
  resource?: string;
  expiresAt: number;
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers }).end(JSON.stringify(body));
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

const token = (prefix: string) => `${prefix}_${randomBytes(24).toString('base64url')}`;
const s256 = (verifier: string) => createHash('sha256').update(verifier).digest('base64url');

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

export class TestAuthorizationServer {
  readonly clients = new Map<string, Client>();
  private readonly codes = new Map<string, PendingCode>();
  private readonly access = new Map<string, AccessToken>();
  private readonly refresh = new Map<string, { clientId: string; scope?: string; resource?: string }>();
  /** Every access and refresh token ever issued, for searching histories and logs. */
  readonly issued: string[] = [];
  counts = { registrations: 0, authorizations: 0, codeExchanges: 0, refreshes: 0, refused: 0 };
  issuer = '';
  private server: Server | null = null;

  constructor(private readonly options: OAuthServerOptions = {}) {}

  async start(): Promise<string> {
    this.server = createServer((req, res) => {
      this.handle(req, res).catch((err: unknown) => send(res, 500, { error: 'server_error', error_description: String(err) }));
    });
    this.issuer = await listen(this.server);
    return this.issuer;
  }

  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    await closed;
  }

  /** Whether a bearer token is a live access token for `resource`. */
  validate(bearer: string | undefined, resource: string): boolean {
    const record = bearer ? this.access.get(bearer) : undefined;
    return record !== undefined && record.expiresAt > Date.now() && (record.resource === undefined || record.resource === resource);
  }

  /** Every access token issued so far expires now (their refresh tokens stay valid). */
  expireAccessTokens(): void {
    for (const record of this.access.values()) record.expiresAt = 0;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.issuer);
    if (req.method === 'GET' && url.pathname === '/.well-known/oauth-authorization-server') {
      return send(res, 200, {
        issuer: this.issuer,
        authorization_endpoint: `${this.issuer}/authorize`,
        token_endpoint: `${this.issuer}/token`,
        registration_endpoint: `${this.issuer}/register`,
        response_types_supported: ['code'],
        grant_types_supported: ['authorization_code', 'refresh_token'],
        code_challenge_methods_supported: ['S256'],
        token_endpoint_auth_methods_supported: ['none', 'client_secret_basic', 'client_secret_post'],
        scopes_supported: this.options.scopes ?? ['reports:read'],
      });
    }
    if (req.method === 'POST' && url.pathname === '/register') return this.register(req, res);
    if (req.method === 'GET' && url.pathname === '/authorize') return this.authorize(url, res);
    if (req.method === 'POST' && url.pathname === '/token') return this.token(req, res);
    return send(res, 404, { error: 'not_found' });
  }

  private async register(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = JSON.parse((await readBody(req)) || '{}') as Partial<Client> & Record<string, unknown>;
    const uris = body.redirect_uris;
    if (!Array.isArray(uris) || uris.length === 0 || !uris.every((u) => typeof u === 'string')) {
      return send(res, 400, { error: 'invalid_redirect_uri', error_description: 'redirect_uris is required' });
    }
    const method = typeof body.token_endpoint_auth_method === 'string' ? body.token_endpoint_auth_method : 'client_secret_basic';
    const client: Client = {
      client_id: `client_${randomUUID()}`,
      redirect_uris: uris,
      token_endpoint_auth_method: method,
      ...(method === 'none' ? {} : { client_secret: token('secret') }),
    };
    this.clients.set(client.client_id, client);
    this.counts.registrations += 1;
    return send(res, 201, { ...body, ...client, client_id_issued_at: Math.floor(Date.now() / 1000) });
  }

  /** The consent page, skipped: the test user approves everything at once. */
  private authorize(url: URL, res: ServerResponse): void {
    const q = url.searchParams;
    const client = this.clients.get(q.get('client_id') ?? '');
    const redirectUri = q.get('redirect_uri') ?? '';
    if (!client || !client.redirect_uris.includes(redirectUri)) return send(res, 400, { error: 'invalid_request', error_description: 'unknown client or redirect_uri' });
    const back = new URL(redirectUri);
    const state = q.get('state');
    if (state) back.searchParams.set('state', state);
    if (q.get('response_type') !== 'code' || q.get('code_challenge_method') !== 'S256' || !q.get('code_challenge')) {
      back.searchParams.set('error', 'invalid_request');
      back.searchParams.set('error_description', 'response_type=code with an S256 code_challenge is required');
    } else {
      const code = token('code');
      this.codes.set(code, {
        clientId: client.client_id,
        redirectUri,
        challenge: q.get('code_challenge')!,
        scope: q.get('scope') ?? undefined,
        resource: q.get('resource') ?? undefined,
        expiresAt: Date.now() + 60_000,
      });
      this.counts.authorizations += 1;
      back.searchParams.set('code', code);
    }
    res.writeHead(302, { location: back.href });
    res.end();
  }

  private authenticate(req: IncomingMessage, form: URLSearchParams): Client | undefined {
    const basic = /^Basic (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const [id, secret] = basic ? Buffer.from(basic, 'base64').toString('utf8').split(':').map(decodeURIComponent) : [form.get('client_id') ?? '', form.get('client_secret') ?? undefined];
    const client = this.clients.get(id ?? '');
    if (!client) return undefined;
    if (client.client_secret !== undefined && client.client_secret !== secret) return undefined;
    return client;
  }

  private issue(res: ServerResponse, grant: { clientId: string; scope?: string; resource?: string }): void {
    const accessToken = token('at');
    const refreshToken = token('rt');
    const ttl = this.options.accessTokenTtlMs ?? 60_000;
    this.access.set(accessToken, { ...grant, expiresAt: Date.now() + ttl });
    this.refresh.set(refreshToken, grant);
    this.issued.push(accessToken, refreshToken);
    send(res, 200, { access_token: accessToken, token_type: 'Bearer', expires_in: Math.ceil(ttl / 1000), refresh_token: refreshToken, ...(grant.scope ? { scope: grant.scope } : {}) });
  }

  private async token(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const form = new URLSearchParams(await readBody(req));
    const client = this.authenticate(req, form);
    if (!client) return send(res, 401, { error: 'invalid_client' });
    const refuse = (description: string) => {
      this.counts.refused += 1;
      send(res, 400, { error: 'invalid_grant', error_description: description });
    };
    if (form.get('grant_type') === 'authorization_code') {
      const code = form.get('code') ?? '';
      const pending = this.codes.get(code);
      this.codes.delete(code); // single use, whatever happens next
      if (!pending || pending.expiresAt < Date.now() || pending.clientId !== client.client_id) return refuse('unknown or expired code');
      if (pending.redirectUri !== form.get('redirect_uri')) return refuse('redirect_uri differs from the authorization request');
      if (s256(form.get('code_verifier') ?? '') !== pending.challenge) return refuse('PKCE verification failed');
      this.counts.codeExchanges += 1;
      return this.issue(res, { clientId: client.client_id, scope: pending.scope, resource: pending.resource ?? form.get('resource') ?? undefined });
    }
    if (form.get('grant_type') === 'refresh_token') {
      const presented = form.get('refresh_token') ?? '';
      const grant = this.refresh.get(presented);
      if (!grant || grant.clientId !== client.client_id) return refuse('unknown refresh token');
      this.refresh.delete(presented); // rotation: a refresh token works once
      this.counts.refreshes += 1;
      return this.issue(res, grant);
    }
    return send(res, 400, { error: 'unsupported_grant_type' });
  }
}

/**
 * The report server over streamable HTTP, protected by the authorization
 * server above: a request without a live access token gets 401 with
 * `WWW-Authenticate: Bearer resource_metadata=...`, and the protected
 * resource metadata (RFC 9728) names the authorization server.
 */
export class ProtectedMcpServer {
  url = '';
  private origin = '';
  private server: Server | null = null;
  private readonly sessions = new Map<string, StreamableHTTPServerTransport>();
  /** Requests refused for want of a valid token. */
  unauthorized = 0;
  /** Access tokens that reached a tool call, in order. */
  readonly toolCallTokens: string[] = [];
  private lastToken = '';

  constructor(private readonly auth: TestAuthorizationServer) {}

  async start(): Promise<string> {
    this.server = createServer((req, res) => {
      this.handle(req, res).catch((err: unknown) => {
        if (!res.headersSent) send(res, 500, { jsonrpc: '2.0', error: { code: -32603, message: String(err) }, id: null });
      });
    });
    this.origin = await listen(this.server);
    this.url = `${this.origin}/mcp`;
    return this.url;
  }

  async close(): Promise<void> {
    for (const transport of this.sessions.values()) await transport.close().catch(() => undefined);
    const server = this.server;
    if (!server) return;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    await closed;
  }

  private metadata(): unknown {
    return { resource: this.url, authorization_servers: [this.auth.issuer], scopes_supported: ['reports:read'], bearer_methods_supported: ['header'] };
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', this.origin).pathname;
    if (req.method === 'GET' && (path === '/.well-known/oauth-protected-resource/mcp' || path === '/.well-known/oauth-protected-resource')) {
      return send(res, 200, this.metadata());
    }
    if (path !== '/mcp') return send(res, 404, { error: 'not_found' });
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    if (!this.auth.validate(bearer, this.url)) {
      this.unauthorized += 1;
      return send(res, 401, { jsonrpc: '2.0', error: { code: -32001, message: 'Unauthorized' }, id: null }, {
        'www-authenticate': `Bearer error="invalid_token", resource_metadata="${this.origin}/.well-known/oauth-protected-resource/mcp"`,
      });
    }
    this.lastToken = bearer!;
    const sessionId = req.headers['mcp-session-id'];
    const known = typeof sessionId === 'string' ? this.sessions.get(sessionId) : undefined;
    if (req.method !== 'POST') {
      if (!known) return send(res, typeof sessionId === 'string' ? 404 : 400, { jsonrpc: '2.0', error: { code: -32000, message: 'Session not found' }, id: null });
      return known.handleRequest(req, res);
    }
    const raw = await readBody(req);
    const body: unknown = raw ? JSON.parse(raw) : undefined;
    if ((body as { method?: unknown } | undefined)?.method === 'tools/call') this.toolCallTokens.push(bearer!);
    if (known) return known.handleRequest(req, res, body);
    if (typeof sessionId === 'string') return send(res, 404, { jsonrpc: '2.0', error: { code: -32000, message: 'Session not found' }, id: null });
    if (!isInitializeRequest(body)) return send(res, 400, { jsonrpc: '2.0', error: { code: -32000, message: 'send initialize first' }, id: null });
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        this.sessions.set(id, transport);
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) this.sessions.delete(transport.sessionId);
    };
    const mcp = buildReportServer(new ReportServerState());
    // A careless server that echoes the caller's token: the client must not let it reach the model or history.
    mcp.registerTool('echo_token', { description: 'Says which bearer token the call came with.', annotations: { readOnlyHint: true } }, () => ({
      content: [{ type: 'text', text: `you called with Bearer ${this.lastToken}` }],
    }));
    await mcp.connect(transport);
    await transport.handleRequest(req, res, body);
  }
}
