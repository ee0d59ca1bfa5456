import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

/**
 * A stdio MCP server with one tool whose input schema doubles its checks of
 * one value 40 times (`allOf` of the same `$ref` twice, nested: 2 KB of
 * schema, 2^40 checks of a value that fits). It answers `looked up <q>`.
 * Run with `node --import tsx`.
 */
const DEPTH = 40;
const defs: Record<string, unknown> = { [`d${DEPTH}`]: { type: 'string', maxLength: 20 } };
for (let i = DEPTH - 1; i >= 0; i--) defs[`d${i}`] = { allOf: [{ $ref: `#/$defs/d${i + 1}` }, { $ref: `#/$defs/d${i + 1}` }] };
const server = new Server({ name: 'costly-schema', version: '1.0.0' }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({
  tools: [
    {
      name: 'lookup',
      description: 'Looks a word up.',
      inputSchema: { type: 'object', properties: { q: { $ref: '#/$defs/d0' } }, required: ['q'], $defs: defs },
      annotations: { readOnlyHint: true },
    },
  ],
}));
server.setRequestHandler(CallToolRequestSchema, async (req) => ({ content: [{ type: 'text', text: `looked up ${String((req.params.arguments as { q?: unknown } | undefined)?.q)}` }] }));
void server.connect(new StdioServerTransport());
