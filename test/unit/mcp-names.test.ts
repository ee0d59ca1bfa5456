import { mcpToolName } from '../../activities/mcp/mcp-tool-name';

const VALID = /^[a-zA-Z0-9_-]{1,64}$/;

describe('MCP tool names the model sees', () => {
  it('leaves a name that fits unchanged', () => {
    expect(mcpToolName('filesystem', 'read_text_file')).toBe('mcp_filesystem_read_text_file');
    const exactly64 = mcpToolName('s'.repeat(10), 't'.repeat(49));
    expect(exactly64).toHaveLength(64);
    expect(exactly64).toBe(`mcp_${'s'.repeat(10)}_${'t'.repeat(49)}`);
  });

  it('keeps the whole tool name and shortens the server part when the name is too long', () => {
    const server = 'acme-internal-knowledge-base-production-eu-west';
    const name = mcpToolName(server, 'search_documents');
    expect(name).toMatch(VALID);
    expect(name).toHaveLength(64);
    expect(name.endsWith('_search_documents')).toBe(true);
    expect(name.startsWith('mcp_acme-internal-')).toBe(true);
  });

  it('keeps the tool name of every tool of a long server, so they stay apart and readable', () => {
    const server = 'a-server-name-that-is-far-too-long-for-the-model-function-names';
    const tools = ['read_text_file', 'read_media_file', 'list_directory', 'get_file_info'];
    const names = tools.map((t) => mcpToolName(server, t));
    names.forEach((name, i) => {
      expect(name).toMatch(VALID);
      expect(name.endsWith(`_${tools[i]}`)).toBe(true);
    });
    expect(new Set(names).size).toBe(tools.length);
    // The server part ends in the same hash of the server name for all of them.
    const hashes = names.map((n, i) => n.slice(0, n.length - tools[i]!.length - 1).slice(-6));
    expect(new Set(hashes).size).toBe(1);
    expect(hashes[0]).toMatch(/^[0-9a-f]{6}$/);
  });

  it('keeps two long server names that share a prefix apart', () => {
    const prefix = 'shared-prefix-for-two-servers-that-goes-on-and-on';
    const a = mcpToolName(`${prefix}-alpha`, 'lookup_customer');
    const b = mcpToolName(`${prefix}-beta`, 'lookup_customer');
    expect(a).not.toBe(b);
    expect(a.endsWith('_lookup_customer') && b.endsWith('_lookup_customer')).toBe(true);
  });

  it('cuts the tool name only when it cannot fit even beside a short server part, keeping the names unique and stable', () => {
    const long = 'x'.repeat(80);
    const a = mcpToolName('server', `${long}_alpha`);
    const b = mcpToolName('server', `${long}_beta`);
    expect(a).toMatch(VALID);
    expect(b).toMatch(VALID);
    expect(a).not.toBe(b);
    expect(a.startsWith('mcp_server_xxx')).toBe(true);
    expect(mcpToolName('server', `${long}_alpha`)).toBe(a);
  });

  it('sanitizes characters outside the function-name alphabet in both parts', () => {
    const name = mcpToolName('acme.wiki with a very long and descriptive server name', 'pages/search v2');
    expect(name).toMatch(VALID);
    expect(name.endsWith('_pages_search_v2')).toBe(true);
  });
});
