import type { McpConfig } from './mcp-config';
import { McpConnection, type McpConnectionOptions } from './mcp-connection';
import { consoleMcpLogger, type McpLogger } from './mcp-log';
import type { McpProtocolExtras } from './mcp-protocol-extras';

export interface McpPoolOptions {
  connectTimeoutMs: number;
  /** Bound on each server's first connect (which may include an install); see McpConnectionOptions. */
  firstConnectTimeoutMs?: number;
  refreshIntervalMs: number;
  reconnect?: McpConnectionOptions['reconnect'];
  logger?: McpLogger;
  /** Token store for HTTP servers that declare `oauth`. */
  oauth?: McpConnectionOptions['oauth'];
  /** Resources and elicitation per server (mcp-protocol-extras.ts). */
  extras?: McpProtocolExtras;
}

/**
 * Every configured MCP server of one worker, connected once at start and
 * shared by all sessions. `version` moves whenever any server's tool list
 * changes, so the tool source rebuilds its catalog only then.
 */
export class McpConnectionPool {
  private readonly byName = new Map<string, McpConnection>();
  private readonly listeners = new Set<() => void>();
  private changes = 0;

  constructor(readonly config: McpConfig, options: McpPoolOptions) {
    for (const server of config.servers) {
      const connection = new McpConnection(server, {
        connectTimeoutMs: options.connectTimeoutMs,
        firstConnectTimeoutMs: options.firstConnectTimeoutMs,
        refreshIntervalMs: options.refreshIntervalMs,
        reconnect: options.reconnect,
        logger: options.logger ?? consoleMcpLogger,
        onToolsChanged: () => this.changed(),
        oauth: options.oauth,
        protocol: options.extras?.forServer(server.name, server.secrets),
      });
      this.byName.set(server.name, connection);
    }
  }

  /** Connects to every server in parallel, each bounded by the connect timeout. Servers that fail keep retrying in the background. */
  async start(): Promise<{ connected: string[]; failed: string[] }> {
    const results = await Promise.all(this.connections.map(async (c) => ({ name: c.name, ok: await c.start() })));
    return { connected: results.filter((r) => r.ok).map((r) => r.name), failed: results.filter((r) => !r.ok).map((r) => r.name) };
  }

  get connections(): McpConnection[] {
    return [...this.byName.values()];
  }

  connection(name: string): McpConnection | undefined {
    return this.byName.get(name);
  }

  /** Increases whenever a tool list changed. */
  get version(): number {
    return this.changes;
  }

  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async close(): Promise<void> {
    this.listeners.clear();
    await Promise.all(this.connections.map((c) => c.close()));
  }

  private changed(): void {
    this.changes += 1;
    for (const listener of this.listeners) listener();
  }
}
