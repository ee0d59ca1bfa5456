import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';

/**
 * A stdio MCP server whose tool list grows: each call of `grow` adds a tool
 * `extra_<n>`, and the SDK announces it with `notifications/tools/list_changed`;
 * `fail` always answers with an error result (`isError`).
 * Run with `node --import tsx`.
 */
const server = new McpServer({ name: 'growing', version: '1.0.0' });
let added = 0;
server.registerTool('grow', { description: 'Adds one more tool to this server.' }, async () => {
  added += 1;
  const name = `extra_${added}`;
  server.registerTool(name, { description: `Extra tool number ${added}.` }, async () => ({ content: [{ type: 'text', text: name }] }));
  return { content: [{ type: 'text', text: `added ${name}` }] };
});
server.registerTool('fail', { description: 'Always answers with an error result.' }, async () => ({ content: [{ type: 'text', text: 'it failed on purpose' }], isError: true }));
void server.connect(new StdioServerTransport());
