import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ElicitRequestSchema, ResourceListChangedNotificationSchema, type Resource } from '@modelcontextprotocol/sdk/types.js';
import { ElicitationBroker } from './mcp-elicitation';
import { errorText, redact, type McpLogger } from './mcp-log';

/** Runs one request on a server's live client, waiting briefly for a reconnect (see `McpConnection.withClient`). */
export interface McpClientAccess {
  readonly name: string;
  withClient<T>(timeoutMs: number, signal: AbortSignal | undefined, fn: (client: Client, timeoutMs: number) => Promise<T>): Promise<T>;
}

/** A bound on what a resource listing keeps: pages read, and resources remembered per server. */
const MAX_RESOURCE_PAGES = 10;
const MAX_RESOURCES = 500;

/**
 * The parts of the protocol besides tools, for one server: its resources
 * (listed when the server declares the capability, re-read on
 * `notifications/resources/list_changed`) and the broker that routes its
 * elicitation requests to the call that caused them.
 */
export class McpServerExtras {
  readonly elicitation: ElicitationBroker;
  private resourceList: Resource[] = [];
  private hasResources = false;
  private listing: Promise<void> | null = null;

  constructor(readonly server: string, private readonly log: McpLogger, private readonly changed: () => void) {
    this.elicitation = new ElicitationBroker(server, log);
  }

  /** Whether the server declared the resources capability at its last initialize. */
  get declaresResources(): boolean {
    return this.hasResources;
  }
  get resources(): readonly Resource[] {
    return this.resourceList;
  }

  /** Called for each new client, before it connects: our capabilities and the handlers for server requests. */
  configure(client: Client): void {
    client.registerCapabilities({ elicitation: { form: {} } });
    client.setRequestHandler(ElicitRequestSchema, (request, extra) => this.elicitation.route(request, extra.signal));
    client.setNotificationHandler(ResourceListChangedNotificationSchema, () => void this.refresh(client));
  }

  /**
   * Called once a client is initialized: reads what the server declared. The
   * resource tools appear only once the first listing is in, so their
   * description (and hash) does not change a moment after a session saw it.
   */
  connected(client: Client): void {
    const declares = client.getServerCapabilities()?.resources !== undefined;
    if (!declares) {
      if (this.hasResources) {
        this.hasResources = false;
        this.resourceList = [];
        this.changed();
      }
      return;
    }
    void this.refresh(client).then(() => {
      if (this.hasResources) return;
      this.hasResources = true;
      this.changed();
    });
  }

  /** Resolves when no listing is running (bounded by the listing's own timeouts). */
  async settled(): Promise<void> {
    await this.listing;
  }

  private refresh(client: Client): Promise<void> {
    this.listing ??= (async () => {
      try {
        const list: Resource[] = [];
        let cursor: string | undefined;
        for (let page = 0; page < MAX_RESOURCE_PAGES && list.length < MAX_RESOURCES; page++) {
          const result = await client.listResources(cursor ? { cursor } : undefined, { timeout: 10_000 });
          list.push(...result.resources);
          cursor = result.nextCursor;
          if (!cursor) break;
        }
        const kept = list.slice(0, MAX_RESOURCES);
        if (JSON.stringify(kept) !== JSON.stringify(this.resourceList)) {
          this.resourceList = kept;
          this.changed();
        }
      } catch (err) {
        this.log.warn(`server "${this.server}": could not list resources: ${errorText(err)}`);
      }
    })().finally(() => {
      this.listing = null;
    });
    return this.listing;
  }
}

/** Every server's extras, and a version that moves whenever one's resources change (the catalog is rebuilt then). */
export class McpProtocolExtras {
  private readonly byServer = new Map<string, McpServerExtras>();
  private changes = 0;

  constructor(private readonly log: McpLogger) {}

  get version(): number {
    return this.changes;
  }

  /** Waits for the resource listings started by the first connects. */
  async settled(): Promise<void> {
    await Promise.all([...this.byServer.values()].map((e) => e.settled()));
  }

  /** The server's extras, made on first ask; what they log has the server's secrets (`secrets`) taken out. */
  forServer(server: string, secrets: readonly string[] = []): McpServerExtras {
    let extras = this.byServer.get(server);
    if (!extras) {
      const log = this.log;
      // A server's error text can echo a header or token of its config: the connection's own logger redacts, so must these.
      const redacting: McpLogger = {
        debug: (m) => log.debug(redact(m, secrets)),
        info: (m) => log.info(redact(m, secrets)),
        warn: (m) => log.warn(redact(m, secrets)),
        error: (m) => log.error(redact(m, secrets)),
      };
      extras = new McpServerExtras(server, redacting, () => {
        this.changes += 1;
      });
      this.byServer.set(server, extras);
    }
    return extras;
  }
}
