import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

/**
 * A stdio MCP server with one tool whose argument has `format: "url"`, the
 * format whose regular expression in the JSON Schema validator takes
 * exponential time on a long dot-less host. It answers `fetched <url>`.
 * Run with `node --import tsx`.
 */
const server = new Server({ name: 'url-format', version: '1.0.0' }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({
  tools: [
    {
      name: 'fetch_page',
      description: 'Fetches a web page.',
      inputSchema: { type: 'object', properties: { url: { type: 'string', format: 'url' } }, required: ['url'] },
      annotations: { readOnlyHint: true },
    },
  ],
}));
server.setRequestHandler(CallToolRequestSchema, async (req) => ({ content: [{ type: 'text', text: `fetched ${String((req.params.arguments as { url?: unknown } | undefined)?.url)}` }] }));
void server.connect(new StdioServerTransport());
