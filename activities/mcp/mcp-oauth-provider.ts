import { randomBytes } from 'node:crypto';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { McpServerConfig } from './mcp-config';
import type { McpLogger } from './mcp-log';
import type { McpOAuthSettings } from './mcp-oauth-config';
import { McpOAuthStore, type McpOAuthDocument, type McpOAuthKey } from './mcp-oauth-store';

export type McpOAuthServer = Extract<McpServerConfig, { type: 'http' }> & { oauth: McpOAuthSettings };

export function hasOAuth(server: McpServerConfig): server is McpOAuthServer {
  return server.type === 'http' && server.oauth !== undefined;
}

/** The command a person runs to authorize a server; named in every message about it. */
export const authorizeCommand = (server: string): string => `npm run mcp:authorize -- ${server}`;

export interface McpOAuthProviderOptions {
  /**
   * `worker`: never waits for a person; an authorization it has to start is
   * kept in the store (the same URL for `pendingTtlMs`), logged once, and
   * the store is watched until the grant arrives. `authorize`: the command a
   * person runs; every authorization URL goes to `onAuthorizationUrl`.
   */
  mode: 'worker' | 'authorize';
  /** Already prefixed with the server's name and redacting its secrets. */
  log: McpLogger;
  /** How often the store is read while waiting for a person (worker mode). */
  pollMs?: number;
  onAuthorized?: () => void;
  onAuthorizationUrl?: (url: URL) => void;
}

/** Most OAuth values this provider added to the server's secrets; older (expired) ones drop out. */
const MAX_REMEMBERED_SECRETS = 16;

/**
 * The SDK's OAuth client, backed by MongoDB: dynamic registration, PKCE,
 * code exchange and refresh are the SDK's (`auth()`, driven by the
 * streamable HTTP transport on a 401); this class keeps what they produce.
 *
 * Every token, refresh token, client secret and verifier it sees is added to
 * the server's secrets list, which the server's logger and its tools' results
 * and errors redact: a server that echoes the token back cannot put it in a
 * workflow history.
 */
export class McpOAuthProvider implements OAuthClientProvider {
  private readonly key: McpOAuthKey;
  private readonly settings: McpOAuthSettings;
  private doc: McpOAuthDocument | undefined;
  private loaded = false;
  private verifier: string | undefined;
  private waiting = false;
  private loggedUrl: string | undefined;
  private watch: NodeJS.Timeout | undefined;
  private readonly remembered: string[] = [];
  private closed = false;

  constructor(
    private readonly store: McpOAuthStore,
    private readonly server: McpOAuthServer,
    private readonly options: McpOAuthProviderOptions,
  ) {
    this.settings = server.oauth;
    this.key = { server: server.name, principal: server.oauth.principal, serverUrl: server.url };
  }

  /** True once the server asked for a grant that only a person can give, until tokens arrive. */
  get awaitingAuthorization(): boolean {
    return this.waiting;
  }

  /** What a tool call or status line says while waiting for a person. */
  get waitingText(): string {
    return `needs authorization: a person must run "${authorizeCommand(this.server.name)}" and open the URL it prints`;
  }

  get redirectUrl(): string {
    return this.settings.redirectUrl;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: this.settings.clientName,
      redirect_uris: [this.settings.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: this.settings.clientSecret ? 'client_secret_basic' : 'none',
      ...(this.settings.scopes ? { scope: this.settings.scopes.join(' ') } : {}),
    };
  }

  state(): string {
    return randomBytes(24).toString('base64url');
  }

  /**
   * Only `auth()` asks for the client information, and it does so first, so
   * this is where a flow starts from what the store holds now: another
   * worker or the authorize command may have changed it since we read it.
   */
  async clientInformation(): Promise<OAuthClientInformationMixed | undefined> {
    await this.reload();
    if (this.settings.clientId) {
      this.remember(this.settings.clientSecret);
      return { client_id: this.settings.clientId, ...(this.settings.clientSecret ? { client_secret: this.settings.clientSecret } : {}) };
    }
    const info = this.doc?.clientInformation;
    this.remember(info?.client_secret);
    return info as OAuthClientInformationMixed | undefined;
  }

  async saveClientInformation(info: OAuthClientInformationMixed): Promise<void> {
    // A configured client is the configuration's business, not the store's.
    if (this.settings.clientId) return;
    this.remember(info.client_secret);
    await this.store.saveClientInformation(this.key, info);
    await this.reload();
  }

  async tokens(): Promise<OAuthTokens | undefined> {
    if (!this.loaded) await this.reload();
    const tokens = this.doc?.tokens;
    if (tokens) this.remember(tokens.access_token, tokens.refresh_token);
    return tokens as OAuthTokens | undefined;
  }

  async saveTokens(tokens: OAuthTokens): Promise<void> {
    this.remember(tokens.access_token, tokens.refresh_token);
    await this.store.saveTokens(this.key, tokens);
    await this.reload();
    if (this.waiting) this.options.log.info('authorized; connecting');
    this.stopWaiting();
  }

  saveCodeVerifier(codeVerifier: string): void {
    this.remember(codeVerifier);
    this.verifier = codeVerifier;
  }

  async codeVerifier(): Promise<string> {
    await this.reload();
    const verifier = this.doc?.pending?.codeVerifier;
    if (!verifier) throw new Error(`no authorization is pending for MCP server "${this.server.name}"; run "${authorizeCommand(this.server.name)}" again`);
    this.remember(verifier);
    return verifier;
  }

  async redirectToAuthorization(authorizationUrl: URL): Promise<void> {
    const state = authorizationUrl.searchParams.get('state');
    if (!this.verifier || !state) throw new Error('the SDK started an authorization without a PKCE verifier or state');
    const pending = { state, codeVerifier: this.verifier, authorizationUrl: authorizationUrl.href, createdAt: new Date() };
    this.verifier = undefined;
    if (this.options.mode === 'authorize') {
      await this.store.savePending(this.key, pending);
      this.options.onAuthorizationUrl?.(authorizationUrl);
      return;
    }
    // Reconnect attempts must not replace the URL a person may be opening right now.
    const kept = await this.store.savePendingIfNoneFresh(this.key, pending, this.settings.pendingTtlMs);
    this.waiting = true;
    if (kept.authorizationUrl !== this.loggedUrl) {
      this.loggedUrl = kept.authorizationUrl;
      this.options.log.warn(
        `needs authorization: run "${authorizeCommand(this.server.name)}" and open ${kept.authorizationUrl} (or the URL the command prints); its tools are unavailable until then`,
      );
    }
    this.startWaiting();
  }

  async invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): Promise<void> {
    if (scope === 'discovery') return;
    await this.store.invalidate(this.key, scope, this.doc?.tokens?.access_token);
    await this.reload();
  }

  /** The stored state, for the authorize command. */
  async current(): Promise<McpOAuthDocument | undefined> {
    await this.reload();
    return this.doc;
  }

  close(): void {
    this.closed = true;
    this.stopWaiting();
  }

  private async reload(): Promise<void> {
    this.doc = await this.store.read(this.key);
    this.loaded = true;
  }

  /** Polls the store for the grant the authorize command writes; a cheap read, unlike a reconnect through discovery. */
  private startWaiting(): void {
    if (this.watch || this.closed) return;
    const heldBefore = this.doc?.tokens?.access_token;
    this.watch = setInterval(() => {
      this.store
        .read(this.key)
        .then((doc) => {
          const arrived = doc?.tokens?.access_token;
          if (!this.watch || !arrived || arrived === heldBefore) return;
          this.doc = doc;
          this.options.log.info('authorization found in the store; connecting');
          this.stopWaiting();
          this.options.onAuthorized?.();
        })
        .catch(() => undefined);
    }, this.options.pollMs ?? 1_000);
    this.watch.unref();
  }

  private stopWaiting(): void {
    this.waiting = false;
    clearInterval(this.watch);
    this.watch = undefined;
  }

  private remember(...values: Array<string | undefined>): void {
    const secrets = this.server.secrets;
    for (const value of values) {
      if (!value || value.length < 8 || secrets.includes(value)) continue;
      secrets.push(value);
      this.remembered.push(value);
      if (this.remembered.length > MAX_REMEMBERED_SECRETS) {
        const old = this.remembered.shift()!;
        const at = secrets.indexOf(old);
        if (at >= 0) secrets.splice(at, 1);
      }
    }
  }
}

/** Makes the OAuth provider for each server that declares `oauth`; the worker's single entry point to the store. */
export class McpOAuth {
  constructor(
    readonly store: McpOAuthStore,
    private readonly options: { pollMs?: number } = {},
  ) {}

  providerFor(server: McpServerConfig, hooks: { log: McpLogger; onAuthorized: () => void }): McpOAuthProvider | undefined {
    if (!hasOAuth(server)) return undefined;
    return new McpOAuthProvider(this.store, server, { mode: 'worker', log: hooks.log, onAuthorized: hooks.onAuthorized, pollMs: this.options.pollMs });
  }
}
