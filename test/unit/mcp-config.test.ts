import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { McpConfigError, loadMcpConfig, parseMcpConfig } from '../../activities/mcp/mcp-config';
import { redact } from '../../activities/mcp/mcp-log';

const problemsOf = (raw: unknown, env: Record<string, string> = {}): string[] => {
  try {
    parseMcpConfig(raw, { env, source: 'test.json' });
  } catch (err) {
    expect(err).toBeInstanceOf(McpConfigError);
    return (err as McpConfigError).problems.map((p) => `${p.server ?? '-'} ${p.field}: ${p.message}`);
  }
  return [];
};

describe('MCP configuration', () => {
  it('accepts the usual shapes: stdio without a type, HTTP with type and headers', () => {
    const config = parseMcpConfig(
      {
        mcpServers: {
          files: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '/tmp'] },
          remote: { type: 'http', url: 'https://mcp.example.com/mcp', headers: { 'X-Team': 'blue' } },
          inferred: { url: 'http://127.0.0.1:3000/mcp' },
        },
        globalShortcut: 'ignored, as other clients keep their own keys here',
      },
      { env: {} },
    );
    expect(config.servers.map((s) => [s.name, s.type])).toEqual([
      ['files', 'stdio'],
      ['remote', 'http'],
      ['inferred', 'http'],
    ]);
    expect(config.servers[0]).toMatchObject({ args: ['-y', '@modelcontextprotocol/server-filesystem', '/tmp'], env: {}, enabled: true, denyTools: [] });
  });

  it('leaves out servers with enabled: false, but still checks their shape', () => {
    const config = parseMcpConfig({ mcpServers: { on: { command: 'a' }, off: { command: 'b', env: { T: '${UNSET}' }, enabled: false } } }, { env: {} });
    expect(config.servers.map((s) => s.name)).toEqual(['on']);
    expect(problemsOf({ mcpServers: { off: { url: 'nope', enabled: false } } })).toEqual(['off url: must be an http:// or https:// URL']);
  });

  it('expands ${VAR} and ${VAR:-default} from the environment and remembers the values as secrets', () => {
    const config = parseMcpConfig(
      {
        mcpServers: {
          api: { type: 'http', url: '${API_URL:-http://127.0.0.1:1/mcp}', headers: { Authorization: 'Bearer ${API_TOKEN}' } },
        },
      },
      { env: { API_TOKEN: 'tok-123456' } },
    );
    const api = config.servers[0]!;
    expect(api.type === 'http' && api.url).toBe('http://127.0.0.1:1/mcp');
    expect(api.type === 'http' && api.headers.Authorization).toBe('Bearer tok-123456');
    expect(redact('sent Bearer tok-123456 and tok-123456', api.secrets)).toBe('sent *** and ***');
  });

  it('names the server and the field of every problem, and never a secret value', () => {
    const problems = problemsOf(
      {
        mcpServers: {
          web: { type: 'http', url: 'ftp://x', headers: { Authorization: 'Bearer ${MISSING_TOKEN}' } },
          local: { command: '', args: 'not-an-array', toolOverrides: { q: { risk: 'scary', timeoutMs: -1 } } },
          typo: { command: 'x', arg: [] },
          odd: { type: 'sse', url: 'http://x' },
          both: { command: 'x', allowTools: ['a'], denyTools: ['a'] },
        },
      },
      { UNUSED: 'x' },
    );
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^web headers\.Authorization: uses \$\{MISSING_TOKEN\}, which is not set in the worker's environment/),
        'web url: must be an http:// or https:// URL',
        expect.stringMatching(/^local command: /),
        expect.stringMatching(/^local args: /),
        expect.stringMatching(/^local toolOverrides\.q\.risk: /),
        expect.stringMatching(/^local toolOverrides\.q\.timeoutMs: /),
        'typo arg: is not a known field',
        expect.stringMatching(/^odd type: .*stdio.*http/),
        'both denyTools: "a" is both allowed and denied',
      ]),
    );
  });

  it('refuses credentials in an HTTP server\'s URL without repeating them, and keeps a key in its query string as a secret', () => {
    const problems = problemsOf({ mcpServers: { crm: { type: 'http', url: 'https://admin:hunter2-pass@crm.example/mcp' } } });
    expect(problems).toEqual(['crm url: must not carry credentials (user:password@host); send them in headers, such as "Authorization"']);
    expect(problems.join('\n')).not.toContain('hunter2');
    const [server] = parseMcpConfig({ mcpServers: { search: { type: 'http', url: 'https://search.example/mcp?api_key=k3y-0123456789&region=eu' } } }).servers;
    expect(server!.secrets).toContain('k3y-0123456789');
    expect(redact('GET https://search.example/mcp?api_key=k3y-0123456789 failed', server!.secrets)).not.toContain('k3y-0123456789');
  });

  it('says which file and field when the file itself is wrong', () => {
    expect(() => parseMcpConfig({ servers: {} }, { source: 'mcp.json' })).toThrow(/Invalid MCP configuration in mcp\.json .*\n  - field "mcpServers": /);
    const dir = mkdtempSync(join(tmpdir(), 'mcp-config-'));
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, '{ "mcpServers": ');
    expect(() => loadMcpConfig(bad)).toThrow(/field "\(file\)": cannot be read as JSON/);
  });

  it('resolves a relative cwd against the config file folder', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mcp-config-'));
    const path = join(dir, 'mcp.json');
    writeFileSync(path, JSON.stringify({ mcpServers: { s: { command: 'x', cwd: 'sub' } } }));
    const server = loadMcpConfig(path, {}).servers[0]!;
    expect(server.type === 'stdio' && server.cwd).toBe(join(dir, 'sub'));
  });

  it('accepts oauth on an HTTP server, keeps its client secret as a secret, and names a misspelt oauth field', () => {
    const config = parseMcpConfig(
      { mcpServers: { crm: { url: 'https://crm.example/mcp', oauth: { redirectUrl: 'http://127.0.0.1:8976/callback', clientId: 'c1', clientSecret: '${CRM_SECRET}' } } } },
      { env: { CRM_SECRET: 's3cret-value' } },
    );
    const server = config.servers[0]!;
    expect(server.type === 'http' && server.oauth).toMatchObject({ redirectUrl: 'http://127.0.0.1:8976/callback', clientId: 'c1', principal: 'shared', clientName: 'durable-agent' });
    expect(server.secrets).toContain('s3cret-value');
    expect(() => parseMcpConfig({ mcpServers: { crm: { url: 'https://crm.example/mcp', oauth: { redirectURL: 'http://127.0.0.1:1/cb' } } } }, { env: {} })).toThrow(
      /server "crm", field "oauth\.redirectURL": is not a known field/,
    );
  });

  it('validates the shipped example config, whose disabled entries may name variables that are not set', () => {
    const config = loadMcpConfig(join(__dirname, '../../examples/mcp-servers.example.json'), {});
    expect(config.servers.map((s) => s.name)).toEqual(['report']);
  });
});
