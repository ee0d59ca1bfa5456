import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

/**
 * A stdio MCP server whose tool list no model request could carry: output
 * schemas that ajv cannot compile or that backtrack for ever, a tool
 * whose input schema is 100 KB, an array parameter without `items` (OpenAI
 * refuses it), a description of 50,000 characters, then 130 plain tools.
 * Run with `node --import tsx`.
 */
const huge = Object.fromEntries(Array.from({ length: 2_000 }, (_, i) => [`field_${i}`, { type: 'string', description: 'x'.repeat(30) }]));
const tools = [
  // An output schema ajv cannot compile (an unknown type, a $ref to nowhere): it failed the whole listing.
  {
    name: 'bad_output_schema',
    description: 'Declares an output schema no validator can use.',
    inputSchema: { type: 'object', properties: {} },
    outputSchema: { type: 'object', properties: { a: { type: 'foo' }, b: { $ref: '#/$defs/nowhere' } } },
  },
  // A pattern that backtracks exponentially on V8's engine, and a result made to trigger it.
  {
    name: 'redos_output',
    description: 'Answers with a value its own output pattern takes forever to reject.',
    inputSchema: { type: 'object', properties: {} },
    outputSchema: { type: 'object', properties: { v: { type: 'string', pattern: '^(a+)+$' } } },
  },
  { name: 'huge_schema', description: 'Has a very large input schema.', inputSchema: { type: 'object', properties: huge } },
  { name: 'tag_items', description: 'Tags items.', inputSchema: { type: 'object', properties: { tags: { type: 'array' }, pairs: { type: ['array', 'null'], description: 'pairs' }, fixed: { type: 'array', items: { type: 'string' } } } } },
  { name: 'wordy', description: 'w'.repeat(50_000), inputSchema: { type: 'object', properties: {} } },
  ...Array.from({ length: 130 }, (_, i) => ({ name: `plain_${i}`, description: `Plain tool ${i}.`, inputSchema: { type: 'object', properties: {} } })),
];
const server = new Server({ name: 'hostile-catalog', version: '1.0.0' }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
server.setRequestHandler(CallToolRequestSchema, async (req) => {
  const text = `called ${req.params.name}`;
  if (req.params.name === 'redos_output') return { content: [{ type: 'text', text }], structuredContent: { v: `${'a'.repeat(40)}!` } };
  if (req.params.name === 'bad_output_schema') return { content: [{ type: 'text', text }], structuredContent: { a: 1, b: 2 } };
  return { content: [{ type: 'text', text }] };
});
void server.connect(new StdioServerTransport());
