import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

/**
 * A stdio MCP server whose tool list no model request could carry: output
 * schemas that ajv cannot compile or that backtrack for ever, a tool
 * whose input schema is 100 KB, an array parameter without `items` (OpenAI
 * refuses it), a description of 50,000 characters, a schema nested 2,000
 * levels deep, listings the SDK's strict check refused (loose, broken), a
 * tool whose result its own MCP library refuses, then 130 plain tools.
 * Run with `node --import tsx`.
 */
const huge = Object.fromEntries(Array.from({ length: 2_000 }, (_, i) => [`field_${i}`, { type: 'string', description: 'x'.repeat(30) }]));
const deep = (levels: number): Record<string, unknown> => {
  let schema: Record<string, unknown> = { type: 'string' };
  for (let i = 0; i < levels; i++) schema = { not: schema };
  return schema;
};
/** Calls of tools that take effect, counted: a call answered with an error may still have run. */
let photosTaken = 0;
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
  // Nested 2,000 levels deep (19 KB): walking it recursively overflowed the worker's stack while the catalog was built.
  { name: 'deep_schema', description: 'Nests without end.', inputSchema: { type: 'object', properties: { x: deep(2_000) } } },
  // What servers send that the MCP SDK's strict check refused, failing the whole listing: a Go nil slice, no root type,
  // boolean subschemas (valid JSON Schema 2020-12).
  { name: 'loose_listing', description: 'Listed loosely.', inputSchema: { properties: { any: true, none: false }, required: null } },
  // Not a tool at all: refused on its own, the other tools stay.
  { name: 'broken_listing', description: 'Has no schema.', inputSchema: 'none' },
  // Runs, then answers with an image its own MCP library refuses to send (data as a data: URI, not base64).
  { name: 'bad_image', description: 'Takes a photo.', inputSchema: { type: 'object', properties: {} } },
  ...Array.from({ length: 130 }, (_, i) => ({ name: `plain_${i}`, description: `Plain tool ${i}.`, inputSchema: { type: 'object', properties: {} } })),
];
const server = new Server({ name: 'hostile-catalog', version: '1.0.0' }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
server.setRequestHandler(CallToolRequestSchema, async (req) => {
  const text = `called ${req.params.name}`;
  if (req.params.name === 'redos_output') return { content: [{ type: 'text', text }], structuredContent: { v: `${'a'.repeat(40)}!` } };
  if (req.params.name === 'bad_image') {
    photosTaken += 1;
    return { content: [{ type: 'image', data: 'data:image/png;base64,iVBORw0KGgo=', mimeType: 'image/png' }] };
  }
  // Not listed: an answer of 12 MB, past the SDK's 10 MB stdio bound.
  if (req.params.name === 'huge_answer') return { content: [{ type: 'text', text: 'h'.repeat(12 * 1024 * 1024) }] };
  if (req.params.name === 'photos_taken') return { content: [{ type: 'text', text: String(photosTaken) }] };
  if (req.params.name === 'bad_output_schema') return { content: [{ type: 'text', text }], structuredContent: { a: 1, b: 2 } };
  return { content: [{ type: 'text', text }] };
});
void server.connect(new StdioServerTransport());
