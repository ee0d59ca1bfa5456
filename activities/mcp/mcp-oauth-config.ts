import { z } from 'zod';

/**
 * `oauth` on an HTTP server entry: the server wants an OAuth access token
 * (MCP authorization), obtained once by a person with
 * `npm run mcp:authorize -- <server>` and kept in MongoDB for every worker.
 */
export const McpOAuthSettings = z.strictObject({
  /**
   * Where the authorization server sends the browser back with the code. The
   * authorize command listens there, so it is normally a loopback URL, e.g.
   * `http://127.0.0.1:8976/callback`.
   */
  redirectUrl: z.url({ protocol: /^https?$/, message: 'must be an http:// or https:// URL' }),
  /** Shown by the authorization server on its consent page; sent in dynamic registration. */
  clientName: z.string().min(1).default('durable-agent'),
  /** Scopes to ask for when the server's metadata does not say. */
  scopes: z.array(z.string().min(1)).optional(),
  /** A client registered by hand; without it the client registers itself (RFC 7591). */
  clientId: z.string().min(1).optional(),
  /** Its secret, if it is a confidential client. A secret: never logged. */
  clientSecret: z.string().min(1).optional(),
  /**
   * Whose grant this is. Connections are shared by every session of a worker,
   * so one grant serves them all; the name only separates grants in the store.
   */
  principal: z.string().min(1).max(200).default('shared'),
  /** How long an authorization URL stays the one to open before a new one is made. */
  pendingTtlMs: z.number().int().positive().default(10 * 60_000),
});
export type McpOAuthSettings = z.infer<typeof McpOAuthSettings>;
