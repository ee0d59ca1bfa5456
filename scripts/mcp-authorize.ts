/**
 * Authorizes the worker to use an MCP server that needs OAuth, once for every
 * worker and session:
 *
 *   npm run mcp:authorize -- <server> [--force] [--timeout-s 300]
 *
 * Reads the same configuration as the worker (MCP_CONFIG_PATH, MONGODB_URI,
 * MONGODB_DATABASE), prints the URL to open, receives the browser's redirect
 * on the server's loopback `oauth.redirectUrl`, and stores the tokens in
 * MongoDB. Exit codes: 0 authorized, 64 usage, 78 configuration, 1 failure.
 */
import { loadMcpConfig, consoleMcpLogger } from '../activities/mcp';
import { serverLogger } from '../activities/mcp/mcp-log';
import { authorizeMcpServer } from '../activities/mcp/mcp-oauth-authorize';
import { hasOAuth } from '../activities/mcp/mcp-oauth-provider';
import { McpOAuthStore } from '../activities/mcp/mcp-oauth-store';
import { redact } from '../activities/mcp/mcp-log';
import { loadConfig } from '../workers/config';
import { connectMongo } from '../workers/dependencies';

const USAGE = 'usage: npm run mcp:authorize -- <server> [--force] [--timeout-s N]';

async function main(argv: string[]): Promise<number> {
  const timeoutAt = argv.indexOf('--timeout-s');
  const timeoutArg = timeoutAt >= 0 ? Number(argv[timeoutAt + 1]) : 300;
  const positional = argv.filter((arg, i) => !arg.startsWith('--') && i !== timeoutAt + 1);
  const name = positional.length === 1 ? positional[0] : undefined;
  if (!name || !Number.isFinite(timeoutArg) || timeoutArg <= 0) {
    console.error(USAGE);
    return 64;
  }
  // The worker's configuration, read the same way; this command never calls the model, so its key may be absent.
  const config = loadConfig({ ...process.env, OPENAI_API_KEY: process.env.OPENAI_API_KEY || 'unused-by-mcp-authorize' });
  if (!config.mcp.configPath) {
    console.error('MCP_CONFIG_PATH is not set: point it at the mcpServers file the worker uses.');
    return 78;
  }
  const mcp = loadMcpConfig(config.mcp.configPath);
  const server = mcp.servers.find((s) => s.name === name);
  if (!server || !hasOAuth(server)) {
    const candidates = mcp.servers.filter(hasOAuth).map((s) => s.name);
    console.error(
      `${server ? `MCP server "${name}" has no "oauth" section` : `no enabled MCP server "${name}" in ${mcp.source}`}; servers with oauth: ${candidates.join(', ') || '(none)'}`,
    );
    return 78;
  }
  const mongo = await connectMongo(config);
  try {
    const outcome = await authorizeMcpServer({
      server,
      store: new McpOAuthStore(mongo.db(config.mongodb.database)),
      print: (line) => console.log(redact(line, server.secrets)),
      timeoutMs: timeoutArg * 1000,
      force: argv.includes('--force'),
      log: serverLogger(consoleMcpLogger, server.name, server.secrets),
    });
    return outcome.status === 'authorized' || outcome.status === 'already-authorized' ? 0 : 1;
  } catch (err) {
    console.error(`could not authorize "${name}": ${redact(err instanceof Error ? err.message : String(err), server.secrets)}`);
    return 1;
  } finally {
    await mongo.close().catch(() => undefined);
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err instanceof Error ? err.message : String(err));
    process.exit(1);
  },
);
