import path from 'node:path';
import { parseMcpConfig } from '../../activities/mcp/mcp-config';
import { McpConnection } from '../../activities/mcp/mcp-connection';
import { mcpCallFailure } from '../../activities/mcp/mcp-errors';
import { mcpRunnable } from '../../activities/mcp/mcp-tool-adapter';
import { MAX_TOOL_DESCRIPTION_CHARS, MAX_TOOLS_PER_SERVER } from '../../activities/mcp/mcp-tool-support';
import { PROJECT_ROOT, recordingLogger } from '../support/mcp-servers';

/*
 * A real stdio MCP server listing tools no model request could carry: each
 * is left out, cut or fixed as it is listed, and the worker says why.
 */

it('a 100 KB input schema, one nested 2,000 levels deep and a malformed listing are not offered (the rest stay), a loose listing is taken, tools past 128 are not offered, a 50,000-character description is cut, an array without items gets them, output schemas are checked without ajv, and a result the server\'s library refuses is told as a call that ran', async () => {
  const server = parseMcpConfig({ mcpServers: { hostile: { command: process.execPath, args: ['--import', 'tsx', path.join(__dirname, '../support/hostile-catalog-mcp-server.ts')], cwd: PROJECT_ROOT } } }, { env: {} }).servers[0]!;
  const logger = recordingLogger();
  const connection = new McpConnection(server, { connectTimeoutMs: 10_000, refreshIntervalMs: 600_000, logger, reconnect: { initialDelayMs: 100, maxDelayMs: 500 } });
  try {
    expect(await connection.start()).toBe(true);
    const names = connection.tools.map((t) => t.name);
    expect(names).toHaveLength(MAX_TOOLS_PER_SERVER);
    expect(names).not.toContain('huge_schema');
    expect(names.slice(0, 6)).toEqual(['bad_output_schema', 'redos_output', 'tag_items', 'wordy', 'loose_listing', 'bad_image']);
    expect(names).not.toContain('plain_122');
    expect(names).not.toContain('deep_schema');
    expect(names).not.toContain('broken_listing');
    expect(logger.lines).toContainEqual(expect.stringMatching(/tool "deep_schema" is not offered: its schemas nest deeper than 64 levels/));
    expect(logger.lines).toContainEqual(expect.stringMatching(/tool "broken_listing" is not offered: its listing does not follow the MCP schema for a tool \(inputSchema: /));
    expect(logger.lines).toContainEqual(expect.stringMatching(/tool "huge_schema" is not offered: its input schema is \d+ characters of JSON, over 32768/));
    expect(logger.lines).toContainEqual(expect.stringMatching(/the server offers 136 tools after allowTools and denyTools; the first 128 are offered, not "plain_122", "plain_123", .*"plain_129" \(narrow it with allowTools\)/));

    const runnable = (name: string) => mcpRunnable({ server, tool: connection.tools.find((t) => t.name === name)!, target: connection, defaultTimeoutMs: 10_000 });
    const tags = runnable('tag_items').spec.parameters as { properties: Record<string, Record<string, unknown>> };
    expect(tags.properties.tags).toEqual({ type: 'array', items: {} });
    expect(tags.properties.pairs).toEqual({ type: ['array', 'null'], description: 'pairs', items: {} });
    expect(tags.properties.fixed).toEqual({ type: 'array', items: { type: 'string' } });
    // A loose listing is taken as the JSON Schema it is.
    expect(runnable('loose_listing').spec.parameters).toEqual({ type: 'object', properties: { any: {}, none: { not: {} } } });
    const wordy = runnable('wordy').spec.description;
    expect(wordy.length).toBeLessThan(MAX_TOOL_DESCRIPTION_CHARS + 100);
    expect(wordy).toMatch(/\[description cut: 46000 more characters\]$/);

    // Output schemas: one no validator can use checks nothing; a backtracking pattern is run on RE2, at once.
    const call = (name: string) => connection.callTool(name, {}, { signal: new AbortController().signal, timeoutMs: 10_000 });
    expect(await call('bad_output_schema')).toMatchObject({ structuredContent: { a: 1, b: 2 } });
    const started = performance.now();
    await expect(call('redos_output')).rejects.toThrow(/does not match the tool's output schema: v must match the pattern \^\(a\+\)\+\$/);
    expect(performance.now() - started).toBeLessThan(2_000);

    // A tool that ran and whose result its server's library refused: the model is told it ran, not to fix its arguments
    // and call again (the photo was taken once).
    const site = { toolName: 'mcp_hostile_bad_image', server: 'hostile', timeoutMs: 10_000, secrets: [] };
    const failure = await call('bad_image').then(
      () => undefined,
      (err: unknown) => mcpCallFailure(err, site),
    );
    expect(failure).toMatchObject({ type: 'ToolFailed', nonRetryable: true });
    expect(failure?.message).toMatch(/^mcp_hostile_bad_image: the tool ran, but MCP server "hostile" could not send its result \(its MCP library refused the result as malformed\): Invalid tools\/call result: .* Next step: the call may have taken effect; do not call it again/s);
    expect(await call('photos_taken')).toMatchObject({ content: [{ type: 'text', text: '1' }] });

    // An answer of 12 MB is read; before, the SDK's 10 MB bound closed the connection under every call in flight.
    const huge = await call('huge_answer');
    expect((huge.content[0] as { text: string }).text).toHaveLength(12 * 1024 * 1024);
    expect(await call('photos_taken')).toMatchObject({ content: [{ type: 'text', text: '1' }] });
  } finally {
    await connection.close();
  }
}, 60_000);

it('tools an allow-list picks past the first 128 a server lists are offered: the cap counts what the allow-list leaves', async () => {
  const server = parseMcpConfig(
    { mcpServers: { picked: { command: process.execPath, args: ['--import', 'tsx', path.join(__dirname, '../support/hostile-catalog-mcp-server.ts')], cwd: PROJECT_ROOT, allowTools: ['plain_128', 'plain_129'] } } },
    { env: {} },
  ).servers[0]!;
  const logger = recordingLogger();
  const connection = new McpConnection(server, { connectTimeoutMs: 10_000, refreshIntervalMs: 600_000, logger, reconnect: { initialDelayMs: 100, maxDelayMs: 500 } });
  try {
    expect(await connection.start()).toBe(true);
    expect(connection.tools.map((t) => t.name)).toEqual(expect.arrayContaining(['plain_128', 'plain_129']));
    expect(logger.lines.filter((l) => /first 128 are offered/.test(l))).toEqual([]);
  } finally {
    await connection.close();
  }
}, 60_000);
