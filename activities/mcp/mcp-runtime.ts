import type { RunnableTool } from '../tools/tool-registry';
import { loadMcpConfig } from './mcp-config';
import { McpConnectionPool, type McpPoolOptions } from './mcp-connection-pool';
import { consoleMcpLogger, type McpLogger } from './mcp-log';
import { McpProtocolExtras } from './mcp-protocol-extras';
import { McpToolSource } from './mcp-tool-source';

export interface McpRuntime {
  pool: McpConnectionPool;
  /** Resources and elicitation per server. */
  extras: McpProtocolExtras;
  toolSource: McpToolSource;
  close(): Promise<void>;
}

export interface StartMcpOptions extends Omit<McpPoolOptions, 'logger'> {
  configPath: string;
  native: RunnableTool[];
  defaultTimeoutMs: number;
  logger?: McpLogger;
  env?: Record<string, string | undefined>;
}

/**
 * Loads the MCP config, connects to every enabled server (each bounded by the
 * connect timeout; one that is down does not stop the worker) and builds the
 * tool source. A name collision fails the start, naming both tools.
 */
export async function startMcp(options: StartMcpOptions): Promise<McpRuntime> {
  const logger = options.logger ?? consoleMcpLogger;
  const config = loadMcpConfig(options.configPath, options.env);
  const extras = new McpProtocolExtras(logger);
  const pool = new McpConnectionPool(config, { ...options, logger, extras });
  try {
    const { connected, failed } = await pool.start();
    // Resource tools appear once their first listing is in; the first catalog should have them.
    await extras.settled();
    logger.info(`${connected.length} of ${config.servers.length} MCP servers connected${failed.length ? `; retrying in the background: ${failed.join(', ')}` : ''}`);
    const toolSource = new McpToolSource({ native: options.native, pool, defaultTimeoutMs: options.defaultTimeoutMs, logger, extras });
    toolSource.assertNoCollisions();
    return { pool, extras, toolSource, close: () => pool.close() };
  } catch (err) {
    await pool.close();
    throw err;
  }
}
