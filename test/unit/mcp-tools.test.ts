import { McpError, ErrorCode, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { ApplicationFailure } from '@temporalio/common';
import { parseMcpConfig } from '../../activities/mcp/mcp-config';
import type { McpCallOptions } from '../../activities/mcp/mcp-connection';
import { McpUnavailableError } from '../../activities/mcp/mcp-failure-kinds';
import { maxAttemptsFor, mcpRunnable, riskFromAnnotations, type McpCallTarget } from '../../activities/mcp/mcp-tool-adapter';
import { mcpToolName } from '../../activities/mcp/mcp-tool-name';
import { resultToText } from '../../activities/mcp/mcp-result';
import { TOOL_NAME_PATTERN } from '../../workflows/tool-spec';
import type { ToolRunContext } from '../../activities/tools/native-tool';

describe('MCP tool names', () => {
  it('are mcp_<server>_<tool>, with characters outside the function-name rule replaced', () => {
    expect(mcpToolName('report', 'query_report')).toBe('mcp_report_query_report');
    expect(mcpToolName('acme.wiki', 'pages/search v2')).toBe('mcp_acme_wiki_pages_search_v2');
    expect(mcpToolName('ünï', 'tool')).toBe('mcp__n__tool');
  });

  it('are cut to 64 characters with a short hash, so long names stay distinct and valid', () => {
    const long = 'x'.repeat(80);
    const a = mcpToolName('server', `${long}_alpha`);
    const b = mcpToolName('server', `${long}_beta`);
    for (const name of [a, b]) {
      expect(name).toHaveLength(64);
      expect(name).toMatch(TOOL_NAME_PATTERN);
      expect(name).toMatch(/_[0-9a-f]{6}$/);
    }
    expect(a).not.toBe(b);
    expect(mcpToolName('server', `${long}_alpha`)).toBe(a);
  });
});

describe('MCP tool risk', () => {
  it('comes from annotations, treating an unannotated tool as destructive as the spec does', () => {
    expect(riskFromAnnotations({ readOnlyHint: true })).toBe('read');
    expect(riskFromAnnotations({ readOnlyHint: false, destructiveHint: false })).toBe('write');
    expect(riskFromAnnotations({ destructiveHint: true })).toBe('destructive');
    expect(riskFromAnnotations(undefined)).toBe('destructive');
  });

  it('lets read-only and idempotent tools retry, never destructive ones', () => {
    expect(maxAttemptsFor('read', { readOnlyHint: true })).toBe(3);
    expect(maxAttemptsFor('read', { readOnlyHint: true, idempotentHint: false })).toBe(1);
    expect(maxAttemptsFor('write', { destructiveHint: false, idempotentHint: true })).toBe(3);
    expect(maxAttemptsFor('write', { destructiveHint: false })).toBe(1);
    expect(maxAttemptsFor('destructive', { idempotentHint: true })).toBe(1);
  });
});

const server = parseMcpConfig(
  {
    mcpServers: {
      crm: {
        type: 'http',
        url: 'http://127.0.0.1:1/mcp',
        headers: { Authorization: 'Bearer ${CRM_TOKEN}' },
        timeoutMs: 4_000,
        toolOverrides: { delete_contact: { risk: 'write', description: 'Archives a contact.', timeoutMs: 2_000 } },
      },
    },
  },
  { env: { CRM_TOKEN: 'crm-secret-token' } },
).servers[0]!;

const tool = (overrides: Partial<Tool> = {}): Tool => ({
  name: 'find_contact',
  description: 'Finds a contact by name.',
  inputSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
  annotations: { readOnlyHint: true },
  ...overrides,
});

const target = (answer: (options: McpCallOptions) => Promise<CallToolResult>): McpCallTarget => ({ callTool: (_name, _args, options) => answer(options) });
const ctx: ToolRunContext = {
  signal: new AbortController().signal,
  idempotencyKey: 's:t:c',
  sessionId: 's',
  namespace: { tenant: 't', user: 'u' },
  heartbeat: () => undefined,
};

async function failureOf(promise: Promise<unknown>): Promise<ApplicationFailure> {
  const err = await promise.then(() => null, (e: unknown) => e);
  expect(err).toBeInstanceOf(ApplicationFailure);
  return err as ApplicationFailure;
}

describe('an MCP tool as a runnable tool', () => {
  it('gets its spec from the listing and the config overrides', () => {
    const find = mcpRunnable({ server, tool: tool(), target: target(async () => ({ content: [] })), defaultTimeoutMs: 10_000 });
    expect(find.spec).toMatchObject({ name: 'mcp_crm_find_contact', risk: 'read', timeoutMs: 4_000, maxAttempts: 3, source: 'mcp', description: 'Finds a contact by name.' });
    const del = mcpRunnable({ server, tool: tool({ name: 'delete_contact', annotations: { destructiveHint: true } }), target: target(async () => ({ content: [] })), defaultTimeoutMs: 10_000 });
    expect(del.spec).toMatchObject({ risk: 'write', description: 'Archives a contact.', timeoutMs: 2_000 });
  });

  it('takes the risk class external from the server config, a tool override winning over it', () => {
    const mail = parseMcpConfig(
      { mcpServers: { mail: { type: 'http', url: 'http://127.0.0.1:1/mcp', risk: 'external', toolOverrides: { list_inbox: { risk: 'read' } } } } },
      { env: {} },
    ).servers[0]!;
    const send = mcpRunnable({ server: mail, tool: tool({ name: 'send_mail', annotations: { readOnlyHint: false } }), target: target(async () => ({ content: [] })), defaultTimeoutMs: 1_000 });
    expect(send.spec).toMatchObject({ risk: 'external', maxAttempts: 1 });
    const inbox = mcpRunnable({ server: mail, tool: tool({ name: 'list_inbox' }), target: target(async () => ({ content: [] })), defaultTimeoutMs: 1_000 });
    expect(inbox.spec.risk).toBe('read');
  });

  it('has a hash that changes when the description or the input schema changes, and only then', () => {
    const hash = (t: Tool) => mcpRunnable({ server, tool: t, target: target(async () => ({ content: [] })), defaultTimeoutMs: 1 }).spec.hash;
    const base = hash(tool());
    expect(hash(tool({ annotations: { readOnlyHint: true, title: 'x' } }))).toBe(base);
    expect(hash(tool({ description: 'Finds a contact by name, and emails them.' }))).not.toBe(base);
    expect(hash(tool({ inputSchema: { type: 'object', properties: { name: { type: 'string' }, cc: { type: 'string' } } } }))).not.toBe(base);
  });

  it('checks arguments against the input schema before calling', () => {
    const find = mcpRunnable({ server, tool: tool(), target: target(async () => ({ content: [] })), defaultTimeoutMs: 1 });
    expect(find.parse({ name: 'Ana' })).toEqual({ ok: true, value: { name: 'Ana' } });
    expect(find.parse({})).toEqual({ ok: false, message: 'name is required' });
  });

  it('passes the abort signal and a request timeout just under the activity timeout', async () => {
    let seen: McpCallOptions | undefined;
    const find = mcpRunnable({ server, tool: tool(), target: target(async (o) => ((seen = o), { content: [{ type: 'text', text: 'Ana' }] })), defaultTimeoutMs: 1 });
    expect(await find.run({ name: 'Ana' }, ctx)).toBe('Ana');
    expect(seen?.signal).toBe(ctx.signal);
    expect(seen?.timeoutMs).toBe(3_600);
  });

  it('turns isError, protocol errors, timeouts and an unreachable server into typed failures with a next step, secrets redacted', async () => {
    const run = (answer: () => Promise<CallToolResult>) =>
      mcpRunnable({ server, tool: tool(), target: target(answer), defaultTimeoutMs: 1 }).run({ name: 'x' }, ctx);

    const isError = await failureOf(run(async () => ({ content: [{ type: 'text', text: 'no such contact (token crm-secret-token)' }], isError: true })));
    expect(isError.type).toBe('ToolFailed');
    expect(isError.nonRetryable).toBe(true);
    expect(isError.message).toBe(
      'mcp_crm_find_contact: the tool reported an error: no such contact (token ***). Next step: read the error; if it names a wrong or missing argument, fix it and call the tool once more, otherwise explain the problem to the user.',
    );

    const invalid = await failureOf(run(async () => Promise.reject(new McpError(ErrorCode.InvalidParams, 'name: expected string'))));
    expect(invalid.type).toBe('ToolInputInvalid');
    expect(invalid.message).toMatch(/the server rejected the arguments: name: expected string\. Next step: fix the arguments/);

    const timeout = await failureOf(run(async () => Promise.reject(new McpError(ErrorCode.RequestTimeout, 'Request timed out'))));
    expect(timeout.type).toBe('ToolTimeout');
    expect(timeout.message).toMatch(/MCP server "crm" did not answer within 4 s, so the request was cancelled/);

    const closed = await failureOf(run(async () => Promise.reject(new McpError(ErrorCode.ConnectionClosed, 'Connection closed'))));
    expect(closed).toMatchObject({ type: 'ToolFailed', nonRetryable: false });

    // The whole expanded header value is a secret, not only the token inside it.
    const down = await failureOf(run(async () => Promise.reject(new McpUnavailableError('crm', 'fetch failed (Bearer crm-secret-token; crm-secret-token)'))));
    expect(down.type).toBe('ToolFailed');
    expect(down.message).toMatch(/MCP server "crm" is unavailable: fetch failed \(\*\*\*; \*\*\*\)\. Next step: tell the user/);
  });
});

describe('MCP results as text for the model', () => {
  it('keeps text, describes binary content and includes embedded text resources', () => {
    const text = resultToText({
      content: [
        { type: 'text', text: 'Top contacts:' },
        { type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' },
        { type: 'resource', resource: { uri: 'crm://contacts.csv', mimeType: 'text/csv', text: 'name\nAna' } },
        { type: 'resource', resource: { uri: 'crm://photo', mimeType: 'image/jpeg', blob: 'AAAA' } },
        { type: 'resource_link', uri: 'crm://contacts/1', name: 'Ana' },
      ],
    });
    expect(text).toBe(
      [
        'Top contacts:',
        '[image image/png, 8 bytes, not shown]',
        '[resource crm://contacts.csv (text/csv)]\nname\nAna',
        '[resource crm://photo (image/jpeg), 3 bytes of binary data, not shown]',
        '[resource link: Ana <crm://contacts/1>]',
      ].join('\n'),
    );
  });

  it('falls back to structured content when there is no text', () => {
    expect(resultToText({ content: [], structuredContent: { count: 2 } })).toBe('{"count":2}');
    expect(resultToText({ content: [{ type: 'text', text: '{"count":2}' }], structuredContent: { count: 2 } })).toBe('{"count":2}');
  });
});
