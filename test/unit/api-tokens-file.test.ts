import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadTokens, mintToken, TokenBook } from '../../api/auth';

/*
 * API tokens configured in a file (API_TOKENS_FILE), as `npm run api` reads
 * them: the entries work, and a file that cannot be used is refused with
 * its name and what is wrong, never with its text (it may hold a token).
 */

const dir = mkdtempSync(join(tmpdir(), 'api-tokens-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let files = 0;
function tokensFile(text: string): string {
  const file = join(dir, `tokens-${(files += 1)}.json`);
  writeFileSync(file, text);
  return file;
}

const ana = mintToken({ tenant: 'acme', user: 'ana' });
const boss = mintToken({ tenant: 'acme', user: 'boss', roles: ['approver'], name: 'on-call' });

it('tokens from API_TOKENS_FILE find their principals; an unknown token finds none', () => {
  const file = tokensFile(`${JSON.stringify([ana.entry, boss.entry], null, 2)}\n`);
  const book = new TokenBook(loadTokens({ API_TOKENS_FILE: file }));
  expect(book.size).toBe(2);
  expect(book.lookup(ana.token)).toMatchObject({ tenant: 'acme', user: 'ana', roles: ['user'] });
  expect(book.lookup(boss.token)).toMatchObject({ tenant: 'acme', user: 'boss', roles: ['approver'], name: 'on-call' });
  expect(book.lookup(mintToken({ tenant: 'acme', user: 'ana' }).token)).toBeUndefined();
  // The file's path may be written with spaces around it, as in an env file.
  expect(loadTokens({ API_TOKENS_FILE: ` ${file} ` })).toHaveLength(2);
});

it('a malformed API_TOKENS_FILE is refused naming the file and what is wrong, and never repeats a token it holds', () => {
  const { token } = ana;
  const secret = token.slice('dat_'.length);
  const cases: Array<[text: string, wrong: RegExp]> = [
    // A token pasted in place of its entry.
    [token, /is not valid JSON.*a token itself/],
    [`${token}\n`, /is not valid JSON.*a token itself/],
    // A token where its hash belongs, with a syntax error next to it.
    [`[{"sha256": ${token}, "tenant": "acme", "user": "ana"}]`, /is not valid JSON/],
    [`[{"sha256": "${token}", "tenant": "acme", "user": "ana",}]`, /is not valid JSON at line 1, column \d+/],
    [`[\n  {"sha256": "${token}",\n   "tenant": "acme"\n`, /is not valid JSON: it ends before the JSON does/],
    ['', /is empty/],
    // Valid JSON that is not a list of entries.
    [JSON.stringify({ sha256: ana.entry.sha256, tenant: 'acme', user: 'ana' }), /\[\] .*expected array/],
    [JSON.stringify([{ sha256: token, tenant: 'acme', user: 'ana' }]), /\[0\.sha256\] the hex SHA-256 of the token/],
    [JSON.stringify([{ ...ana.entry, user: undefined, roles: ['root'] }]), /\[0\.user\] .*; \[0\.roles\.0\] /],
  ];
  for (const [text, wrong] of cases) {
    const file = tokensFile(text);
    let message = '';
    try {
      loadTokens({ API_TOKENS_FILE: file });
    } catch (err) {
      message = (err as Error).message;
    }
    expect({ text: text.slice(0, 30), message }).toEqual({ text: text.slice(0, 30), message: expect.stringContaining(`API_TOKENS_FILE=${file}`) });
    expect(message).toMatch(wrong);
    // Not the token, nor any 5 characters of it in a row (JSON.parse's message quotes about 10 characters of the text).
    for (let i = 0; i + 5 <= secret.length; i++) expect(message).not.toContain(secret.slice(i, i + 5));
  }
});

it('a missing API_TOKENS_FILE is named', () => {
  const missing = join(dir, 'nowhere', 'tokens.json');
  expect(() => loadTokens({ API_TOKENS_FILE: missing })).toThrow(`API_TOKENS_FILE=${missing} cannot be read: ENOENT`);
  expect(() => loadTokens({ API_TOKENS_FILE: dir })).toThrow(`API_TOKENS_FILE=${dir} cannot be read: EISDIR`);
});

it('API_TOKENS and API_TOKENS_FILE both set is refused, naming both and neither value', () => {
  const file = tokensFile(JSON.stringify([ana.entry]));
  const inline = JSON.stringify([boss.entry]);
  expect(() => loadTokens({ API_TOKENS: inline, API_TOKENS_FILE: file })).toThrow(/API_TOKENS and API_TOKENS_FILE are both set: set one of them/);
  let message = '';
  try {
    loadTokens({ API_TOKENS: inline, API_TOKENS_FILE: file });
  } catch (err) {
    message = (err as Error).message;
  }
  expect(message).not.toContain(boss.entry.sha256);
  expect(message).not.toContain(file);
  // Either one alone still works; blank counts as unset.
  expect(loadTokens({ API_TOKENS: inline, API_TOKENS_FILE: ' ' })).toHaveLength(1);
  expect(loadTokens({ API_TOKENS: '', API_TOKENS_FILE: file })).toHaveLength(1);
});
