import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { Principal, PrincipalRole } from '../workflows/principal';

/**
 * One API token as configuration holds it: only the SHA-256 of the token,
 * and the principal it acts for. The token itself is shown once, when made
 * (`npm run api:token`), and never stored.
 */
export const ApiTokenEntry = z.object({
  sha256: z.string().regex(/^[0-9a-f]{64}$/, 'the hex SHA-256 of the token (npm run api:token prints it)'),
  tenant: Principal.shape.tenant,
  user: Principal.shape.user,
  roles: z.array(PrincipalRole).max(3).default(['user']),
  /** A label for logs (never the token). */
  name: z.string().max(64).optional(),
});
export type ApiTokenEntry = z.infer<typeof ApiTokenEntry>;

export const ApiTokenList = z.array(ApiTokenEntry).max(10_000);

export const sha256Hex = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

/** A new random token and the entry that configures it. */
export function mintToken(principal: { tenant: string; user: string; roles?: PrincipalRole[]; name?: string }): { token: string; entry: ApiTokenEntry } {
  const token = `dat_${randomBytes(24).toString('base64url')}`;
  return { token, entry: ApiTokenEntry.parse({ sha256: sha256Hex(token), ...principal }) };
}

/** Reads the token list from API_TOKENS (JSON) or API_TOKENS_FILE (a JSON file); a bad list is an error naming where. */
export function loadTokens(env: NodeJS.ProcessEnv): ApiTokenEntry[] {
  const inline = env.API_TOKENS?.trim();
  const file = env.API_TOKENS_FILE?.trim();
  let text: string;
  let where: string;
  if (inline) {
    text = inline;
    where = 'API_TOKENS';
  } else if (file) {
    try {
      text = readFileSync(file, 'utf8');
    } catch (err) {
      throw new Error(`API_TOKENS_FILE=${file} cannot be read: ${(err as Error).message}`);
    }
    where = `API_TOKENS_FILE=${file}`;
  } else {
    return [];
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new Error(`${where} is not JSON: ${(err as Error).message}`);
  }
  const parsed = ApiTokenList.safeParse(json);
  if (!parsed.success) {
    throw new Error(`${where}: ${parsed.error.issues.map((i) => `[${i.path.join('.')}] ${i.message}`).join('; ')}`);
  }
  return parsed.data;
}

/** Finds the principal of a presented token (constant-time comparison of the hashes). */
export class TokenBook {
  private readonly byHash = new Map<string, ApiTokenEntry>();

  constructor(entries: ApiTokenEntry[]) {
    for (const e of entries) this.byHash.set(e.sha256, e);
  }

  get size(): number {
    return this.byHash.size;
  }

  lookup(token: string): ApiTokenEntry | undefined {
    const hash = sha256Hex(token);
    const entry = this.byHash.get(hash);
    // The map lookup finds the candidate; the comparison of equal-length digests is constant-time.
    if (!entry || !timingSafeEqual(Buffer.from(entry.sha256, 'hex'), Buffer.from(hash, 'hex'))) return undefined;
    return entry;
  }
}
