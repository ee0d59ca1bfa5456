import type { ToolSource } from '../tool-activities';
import { ToolCatalogError, buildCatalog, type RunnableTool } from '../tools/tool-registry';
import type { McpConnectionPool } from './mcp-connection-pool';
import { consoleMcpLogger, type McpLogger } from './mcp-log';
import type { McpProtocolExtras } from './mcp-protocol-extras';
import { resourceRunnables } from './mcp-resource-tools';
import { mcpRunnable } from './mcp-tool-adapter';
import { selectTools } from './mcp-tool-support';

export interface McpToolSourceOptions {
  /** Native tools, already runnable (`local_<name>`). */
  native: RunnableTool[];
  pool: McpConnectionPool;
  /** Per-call timeout for MCP tools with none configured. */
  defaultTimeoutMs: number;
  logger?: McpLogger;
  /** Resources and elicitation per server; without it, tools only. */
  extras?: McpProtocolExtras;
}

export { selectTools } from './mcp-tool-support';

interface Candidate {
  owner: string;
  tool: RunnableTool;
}

/**
 * Native tools plus every MCP server's current tools, as one catalog. Rebuilt
 * only when a server's tool list changed. A name defined twice is an error
 * naming both owners: at worker start it fails the start; when a server adds
 * a clashing tool later, that tool is left out and the clash logged, so one
 * server cannot take the agent down.
 */
export class McpToolSource implements ToolSource {
  private built: ReturnType<ToolSource['current']> | null = null;
  private builtAt = '';
  private readonly reported = new Set<string>();
  /** Who held each name in a catalog built before. */
  private readonly heldBy = new Map<string, string>();
  private readonly logger: McpLogger;

  constructor(private readonly options: McpToolSourceOptions) {
    this.logger = options.logger ?? consoleMcpLogger;
  }

  current(): ReturnType<ToolSource['current']> {
    const version = `${this.options.pool.version}:${this.options.extras?.version ?? 0}`;
    if (this.built && this.builtAt === version) return this.built;
    const { kept, collisions } = this.collect();
    for (const message of collisions) {
      if (this.reported.has(message)) continue;
      this.reported.add(message);
      this.logger.error(`${message}; the second one is left out of the catalog`);
    }
    this.built = buildCatalog(kept.map((c) => ({ owner: c.owner, tools: [c.tool] })));
    for (const c of kept) this.heldBy.set(c.tool.spec.name, c.owner);
    this.builtAt = version;
    return this.built;
  }

  /** Throws a ToolCatalogError naming both owners of every clashing name. */
  assertNoCollisions(): void {
    const { collisions } = this.collect();
    if (collisions.length > 0) throw new ToolCatalogError(collisions.join('\n'));
  }

  private collect(): { kept: Candidate[]; collisions: string[] } {
    const { native, pool, defaultTimeoutMs } = this.options;
    const candidates: Candidate[] = [
      ...native.map((tool) => ({ owner: `native tool "${tool.spec.name}"`, tool })),
      ...pool.connections.flatMap((connection) =>
        selectTools(connection.server, connection.tools).map((tool) => ({
          owner: `MCP server "${connection.name}" (tool "${tool.name}")`,
          tool: mcpRunnable({
            server: connection.server,
            tool,
            target: connection,
            defaultTimeoutMs,
            elicitation: this.options.extras?.forServer(connection.name).elicitation,
            logger: this.logger,
          }),
        })),
      ),
      // After the servers' own tools, so a server tool that happens to be named read_resource keeps its name.
      ...pool.connections.flatMap((connection) =>
        this.options.extras
          ? resourceRunnables({ server: connection.server, extras: this.options.extras.forServer(connection.name), access: connection, defaultTimeoutMs }).map((tool) => ({
              owner: `MCP server "${connection.name}" (resources)`,
              tool,
            }))
          : [],
      ),
    ];
    const owners = new Map<string, string>();
    const kept: Candidate[] = [];
    const collisions: string[] = [];
    // A name keeps the owner that held it in the catalog before (its sessions have approved that tool): a tool
    // another server adds later under the same name is the one left out, whatever the order of the file.
    const holders = candidates.filter((c) => this.heldBy.get(c.tool.spec.name) === c.owner);
    const rest = candidates.filter((c) => this.heldBy.get(c.tool.spec.name) !== c.owner);
    for (const candidate of [...holders, ...rest]) {
      const name = candidate.tool.spec.name;
      const existing = owners.get(name);
      if (existing) {
        collisions.push(`tool name collision: "${name}" is defined by both ${existing} and ${candidate.owner}`);
        continue;
      }
      owners.set(name, candidate.owner);
      kept.push(candidate);
    }
    return { kept, collisions };
  }
}
