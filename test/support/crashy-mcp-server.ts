import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';

/**
 * A stdio MCP server that exits 100 ms after each handshake: it connects,
 * then is gone, every time. Run with `node --import tsx`.
 */
const server = new McpServer({ name: 'crashy', version: '1.0.0' });
server.registerTool('noop', { description: 'Does nothing.' }, async () => ({ content: [{ type: 'text', text: 'ok' }] }));
server.server.oninitialized = () => setTimeout(() => process.exit(3), 100);
void server.connect(new StdioServerTransport());
