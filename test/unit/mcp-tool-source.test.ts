import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { parseMcpConfig } from '../../activities/mcp/mcp-config';
import type { McpConnectionPool } from '../../activities/mcp/mcp-connection-pool';
import { McpToolSource } from '../../activities/mcp/mcp-tool-source';

/*
 * Which server a clashing tool name belongs to as servers' lists change. The
 * pool is a stand-in holding tool lists (nothing is called); the rule under
 * test is the catalog's.
 */

const servers = parseMcpConfig({ mcpServers: { crm: { type: 'http', url: 'http://127.0.0.1:1/mcp' }, crm_admin: { type: 'http', url: 'http://127.0.0.1:2/mcp' } } }, { env: {} }).servers;
const tool = (name: string): Tool => ({ name, description: `${name}.`, inputSchema: { type: 'object', properties: {} } });

function poolWith(lists: Record<string, Tool[]>, version: number): McpConnectionPool {
  return {
    version,
    connections: servers.map((server) => ({ name: server.name, server, tools: lists[server.name] ?? [], callTool: async () => ({ content: [] }) })),
  } as unknown as McpConnectionPool;
}

it('a name keeps the server that held it when a server listed earlier in the file adds a tool of the same name later', () => {
  const lines: string[] = [];
  const logger = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: (m: string) => void lines.push(m) };
  let pool = poolWith({ crm: [tool('find')], crm_admin: [tool('delete_user')] }, 1);
  const source = new McpToolSource({ native: [], pool: { get version() { return pool.version; }, get connections() { return pool.connections; } } as unknown as McpConnectionPool, defaultTimeoutMs: 1_000, logger });
  const ownerOf = (name: string) => source.current().byName.get(name)?.spec.description;
  expect(ownerOf('mcp_crm_admin_delete_user')).toBe('delete_user.');

  // crm (first in the file) now also lists "admin.delete_user": the same model-facing name.
  pool = poolWith({ crm: [tool('find'), tool('admin.delete_user')], crm_admin: [tool('delete_user')] }, 2);
  expect(ownerOf('mcp_crm_admin_delete_user')).toBe('delete_user.');
  expect(lines).toEqual([expect.stringMatching(/tool name collision: "mcp_crm_admin_delete_user" is defined by both MCP server "crm_admin" \(tool "delete_user"\) and MCP server "crm" \(tool "admin\.delete_user"\); the second one is left out/)]);
});
