import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpProtocolExtras } from '../../activities/mcp/mcp-protocol-extras';
import type { McpLogger } from '../../activities/mcp/mcp-log';

describe("a server's protocol extras", () => {
  it("log a failed resource listing without the server's secrets, as the connection's own logger does", async () => {
    const lines: string[] = [];
    const logger: McpLogger = { debug: (m) => lines.push(m), info: (m) => lines.push(m), warn: (m) => lines.push(m), error: (m) => lines.push(m) };
    const extras = new McpProtocolExtras(logger).forServer('crm', ['tok-5ecret-123']);
    // A server whose error page echoes the bearer token it was sent.
    const client = {
      getServerCapabilities: () => ({ resources: {} }),
      listResources: async () => {
        throw new Error('401 Unauthorized: invalid token "Bearer tok-5ecret-123"');
      },
    } as unknown as Client;
    extras.connected(client);
    await extras.settled();
    expect(lines).toEqual(['server "crm": could not list resources: 401 Unauthorized: invalid token "Bearer ***"']);
  });
});
