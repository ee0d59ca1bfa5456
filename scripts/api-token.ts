import { parseArgs } from 'node:util';
import { mintToken } from '../api/auth';
import { PrincipalRole } from '../workflows/principal';

/**
 * `npm run api:token -- --tenant acme --user ana [--roles approver,admin] [--name label]`:
 * makes an API token. Prints the token once (give it to the caller) and the
 * entry to add to API_TOKENS / API_TOKENS_FILE, which holds only its hash.
 */
const { values } = parseArgs({ options: { tenant: { type: 'string' }, user: { type: 'string' }, roles: { type: 'string' }, name: { type: 'string' } }, strict: true });
if (!values.tenant || !values.user) {
  process.stderr.write('usage: npm run api:token -- --tenant <tenant> --user <user> [--roles user,approver,admin] [--name <label>]\n');
  process.exit(64);
}
const roles = (values.roles ?? 'user').split(',').map((r) => r.trim()).filter(Boolean);
const parsed = PrincipalRole.array().safeParse(roles);
if (!parsed.success) {
  process.stderr.write(`--roles: each must be one of ${PrincipalRole.options.join(', ')}\n`);
  process.exit(64);
}
const { token, entry } = mintToken({ tenant: values.tenant, user: values.user, roles: parsed.data, ...(values.name ? { name: values.name } : {}) });
process.stdout.write(`token (shown once): ${token}\nentry for API_TOKENS / API_TOKENS_FILE: ${JSON.stringify(entry)}\n`);
