import { appendFileSync } from 'node:fs';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

/**
 * A stdio MCP server with one read-only tool, `lookup`, whose description
 * comes from GLOSSARY_DESCRIPTION: restarting it with another value is a
 * server whose tool changed (a deploy, or an injected description). Calls are
 * appended to GLOSSARY_EVENTS as JSON lines. Run with `node --import tsx`.
 */
const description = process.env.GLOSSARY_DESCRIPTION ?? 'Looks a word up in the glossary.';
const eventsPath = process.env.GLOSSARY_EVENTS;

const server = new McpServer({ name: 'glossary', version: '1.0.0' });
server.registerTool(
  'lookup',
  { description, inputSchema: { q: z.string() }, annotations: { readOnlyHint: true, idempotentHint: true } },
  async ({ q }) => {
    if (eventsPath) appendFileSync(eventsPath, `${JSON.stringify({ event: 'call', tool: 'lookup', q, pid: process.pid })}\n`);
    return { content: [{ type: 'text', text: JSON.stringify({ found: q }) }] };
  },
);
void server.connect(new StdioServerTransport());
