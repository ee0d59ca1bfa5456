import type { Collection, Db } from 'mongodb';
import { z } from 'zod';

/**
 * Where OAuth state for remote MCP servers lives: one document per server and
 * principal, so a user authorizes once and every worker and session after
 * that reuses the grant. Documents hold secrets (tokens, client secret, PKCE
 * verifier); nothing read from here may be logged or leave the worker.
 */
export const MCP_OAUTH_COLLECTION = 'mcp_oauth';

/** Tokens as the SDK hands them to `saveTokens`, kept unchanged (the SDK relies on `issuer`). */
export const StoredTokens = z.looseObject({
  access_token: z.string().min(1),
  token_type: z.string().min(1),
  refresh_token: z.string().min(1).optional(),
  expires_in: z.number().optional(),
  scope: z.string().optional(),
  issuer: z.string().optional(),
});
export type StoredTokens = z.infer<typeof StoredTokens>;

/** Client information from dynamic registration (or configured), kept unchanged. */
export const StoredClientInformation = z.looseObject({
  client_id: z.string().min(1),
  client_secret: z.string().optional(),
  issuer: z.string().optional(),
});
export type StoredClientInformation = z.infer<typeof StoredClientInformation>;

/** An authorization a user has been asked to complete: the URL they open and what the redirect is checked against. */
export const PendingAuthorization = z.object({
  state: z.string().min(16),
  codeVerifier: z.string().min(43),
  authorizationUrl: z.string().url(),
  createdAt: z.date(),
});
export type PendingAuthorization = z.infer<typeof PendingAuthorization>;

export const McpOAuthDocument = z.object({
  _id: z.string(),
  server: z.string(),
  principal: z.string(),
  /** The MCP endpoint the grant is for: a grant for another URL is never presented. */
  serverUrl: z.string(),
  clientInformation: StoredClientInformation.optional(),
  tokens: StoredTokens.optional(),
  /** When the access token expires, from `expires_in` at save time. */
  tokensExpireAt: z.date().optional(),
  tokensSavedAt: z.date().optional(),
  pending: PendingAuthorization.optional(),
  /** The SDK's discovery result (metadata documents only, no secrets). */
  discovery: z.looseObject({ authorizationServerUrl: z.string() }).optional(),
  updatedAt: z.date(),
});
export type McpOAuthDocument = z.infer<typeof McpOAuthDocument>;

export interface McpOAuthKey {
  server: string;
  principal: string;
  serverUrl: string;
}

/** A stored document that does not parse: reported by id, never with its contents (they are secrets). */
export class McpOAuthStoreCorrupt extends Error {
  override readonly name = 'McpOAuthStoreCorrupt';
  constructor(readonly id: string, fields: string[]) {
    super(`the stored OAuth state ${id} in ${MCP_OAUTH_COLLECTION} is malformed (fields: ${fields.join(', ') || '(document)'}); delete it and authorize again`);
  }
}

/** Deterministic id: the same server and principal always address the same document. */
export function oauthDocumentId(key: Pick<McpOAuthKey, 'server' | 'principal'>): string {
  return `${key.server}:${key.principal}`;
}

type Field = 'clientInformation' | 'tokens' | 'pending' | 'discovery';

/**
 * Reads and writes the OAuth documents. Every write is an upsert on the
 * deterministic id (FerretDB has no transactions); a document whose
 * `serverUrl` differs from the configured one reads as empty, so changing a
 * server's URL never sends its old tokens to the new one.
 */
export class McpOAuthStore {
  private readonly collection: Collection<{ _id: string }>;

  constructor(db: Db) {
    this.collection = db.collection<{ _id: string }>(MCP_OAUTH_COLLECTION);
  }

  async read(key: McpOAuthKey): Promise<McpOAuthDocument | undefined> {
    const id = oauthDocumentId(key);
    const raw = await this.collection.findOne({ _id: id });
    if (!raw) return undefined;
    const parsed = McpOAuthDocument.safeParse(raw);
    if (!parsed.success) throw new McpOAuthStoreCorrupt(id, [...new Set(parsed.error.issues.map((i) => i.path.map(String).join('.')))]);
    return parsed.data.serverUrl === key.serverUrl ? parsed.data : undefined;
  }

  async saveClientInformation(key: McpOAuthKey, info: StoredClientInformation): Promise<void> {
    await this.set(key, { clientInformation: StoredClientInformation.parse(info) });
  }

  async saveTokens(key: McpOAuthKey, tokens: StoredTokens, now = new Date()): Promise<void> {
    const parsed = StoredTokens.parse(tokens);
    const expires = parsed.expires_in !== undefined ? { tokensExpireAt: new Date(now.getTime() + parsed.expires_in * 1000) } : {};
    // A completed grant ends the pending authorization.
    await this.set(key, { tokens: parsed, tokensSavedAt: now, ...expires }, ['pending', ...(expires.tokensExpireAt ? [] : ['tokensExpireAt' as const])]);
  }

  /** Starts a pending authorization, unless one younger than `freshMs` is already waiting (its URL stays the one to open). */
  async savePendingIfNoneFresh(key: McpOAuthKey, pending: PendingAuthorization, freshMs: number): Promise<PendingAuthorization> {
    const current = await this.read(key);
    if (current?.pending && pending.createdAt.getTime() - current.pending.createdAt.getTime() < freshMs) return current.pending;
    await this.set(key, { pending: PendingAuthorization.parse(pending) });
    return pending;
  }

  async savePending(key: McpOAuthKey, pending: PendingAuthorization): Promise<void> {
    await this.set(key, { pending: PendingAuthorization.parse(pending) });
  }

  async saveDiscovery(key: McpOAuthKey, discovery: McpOAuthDocument['discovery']): Promise<void> {
    await this.set(key, { discovery });
  }

  /**
   * Forgets what the server said is no longer valid. Tokens are removed only
   * if they are still the ones the caller holds: another worker may have
   * refreshed them meanwhile, and its fresh grant must survive.
   */
  async invalidate(key: McpOAuthKey, scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery', heldAccessToken?: string): Promise<void> {
    const fields: Array<Field | 'tokensExpireAt' | 'tokensSavedAt'> =
      scope === 'all'
        ? ['clientInformation', 'tokens', 'tokensExpireAt', 'tokensSavedAt', 'pending', 'discovery']
        : scope === 'client'
          ? ['clientInformation']
          : scope === 'tokens'
            ? ['tokens', 'tokensExpireAt', 'tokensSavedAt']
            : scope === 'verifier'
              ? ['pending']
              : ['discovery'];
    const filter: Record<string, unknown> = { _id: oauthDocumentId(key) };
    if (heldAccessToken !== undefined && fields.includes('tokens')) filter['tokens.access_token'] = heldAccessToken;
    await this.collection.updateOne(filter, { $unset: Object.fromEntries(fields.map((f) => [f, ''])), $set: { updatedAt: new Date() } });
  }

  async delete(key: Pick<McpOAuthKey, 'server' | 'principal'>): Promise<void> {
    await this.collection.deleteOne({ _id: oauthDocumentId(key) });
  }

  private async set(key: McpOAuthKey, fields: Partial<McpOAuthDocument>, unset: string[] = []): Promise<void> {
    const id = oauthDocumentId(key);
    // A document for another URL of the same server name is replaced wholesale, not merged into.
    const existing = await this.collection.findOne({ _id: id }, { projection: { serverUrl: 1 } });
    const stale = existing !== null && (existing as { serverUrl?: unknown }).serverUrl !== key.serverUrl;
    const clear = stale ? ['clientInformation', 'tokens', 'tokensExpireAt', 'tokensSavedAt', 'pending', 'discovery'].filter((f) => !(f in fields)) : unset;
    await this.collection.updateOne(
      { _id: id },
      {
        $set: { server: key.server, principal: key.principal, serverUrl: key.serverUrl, ...fields, updatedAt: new Date() },
        ...(clear.length > 0 ? { $unset: Object.fromEntries(clear.map((f) => [f, ''])) } : {}),
      },
      { upsert: true },
    );
  }
}
