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

/** What a token list looks like, for error messages. */
const ENTRY_EXAMPLE = '[{"sha256":"<the token\'s SHA-256, hex>","tenant":"acme","user":"ana","roles":["user"]}]';

/** A token as mintToken makes them (what a person may paste where its entry belongs). */
const TOKEN_PATTERN = /\bdat_[A-Za-z0-9_-]{16,}/;

/**
 * Where and why `text` is not JSON, from JSON.parse's error. Only the part of
 * its message that says what was expected is kept: V8 quotes the text around
 * the error (or all of a short text), and that text may be a token.
 */
function jsonSyntaxError(text: string, err: unknown): string {
  const message = err instanceof Error ? err.message : '';
  const located = /^([^"]*) in JSON at position (\d+)/.exec(message);
  const position = located ? Number(located[2]) : undefined;
  if (/Unexpected end of JSON input/.test(message) || (position !== undefined && position >= text.trimEnd().length)) return ': it ends before the JSON does (a bracket, brace or quote left open?)';
  if (!located || position === undefined) return ' (unexpected text)';
  const before = text.slice(0, position);
  const expected = located[1]!;
  return ` at line ${before.split('\n').length}, column ${position - before.lastIndexOf('\n')} (${expected.charAt(0).toLowerCase()}${expected.slice(1)})`;
}

/**
 * Reads the token list from API_TOKENS (JSON) or API_TOKENS_FILE (a JSON
 * file), never both. A list that cannot be used is an error naming where it came from and
 * what is wrong, never repeating its text: it may hold a token pasted by mistake.
 */
export function loadTokens(env: NodeJS.ProcessEnv): ApiTokenEntry[] {
  const inline = env.API_TOKENS?.trim();
  const file = env.API_TOKENS_FILE?.trim();
  let text: string;
  let where: string;
  // Both set would leave one of them silently unused: an operator who edits the file would see no change.
  if (inline && file) throw new Error('API_TOKENS and API_TOKENS_FILE are both set: set one of them (the file keeps tokens out of the environment).');
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
  if (!text.trim()) throw new Error(`${where} is empty: it should hold a JSON list of token entries such as ${ENTRY_EXAMPLE}.`);
  const holdsToken = TOKEN_PATTERN.test(text) ? ' It holds a token itself: configure the entry `npm run api:token` prints (the token\'s SHA-256 and its principal), never the token.' : '';
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new Error(`${where} is not valid JSON${jsonSyntaxError(text, err)}; it should hold a JSON list of token entries such as ${ENTRY_EXAMPLE}. Its text is not repeated here, as it may hold tokens.${holdsToken}`);
  }
  const parsed = ApiTokenList.safeParse(json);
  if (!parsed.success) {
    throw new Error(`${where}: ${parsed.error.issues.map((i) => `[${i.path.join('.')}] ${i.message}`).join('; ')}.${holdsToken}`);
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
