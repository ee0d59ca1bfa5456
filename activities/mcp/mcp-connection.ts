import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpConnectionMetrics } from './mcp-metrics';
import { ErrorCode, McpError, ToolListChangedNotificationSchema, type CallToolResult, type Progress, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { hashOf } from '../tools/tool-registry';
import type { McpServerConfig } from './mcp-config';
import { McpUnavailableError, isConnectionFailure, isSessionNotFound } from './mcp-failure-kinds';
import { listAllTools, type RefusedTool } from './mcp-list-tools';
import { errorText, serverLogger, type McpLogger } from './mcp-log';
import { ProgressRouter } from './mcp-progress-routing';
import { MAX_TOOLS_PER_SERVER, selectTools, unsupportedReason } from './mcp-tool-support';
import { safeOutputValidator } from './mcp-output-validator';
import type { JsonSchemaType, JsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
import type { McpOAuth, McpOAuthProvider } from './mcp-oauth-provider';
import { backoffDelay, waitFor, withTimeout } from './mcp-timing';
import { createTransport, type McpTransportHandle } from './mcp-transport';

export type McpConnectionStatus = 'connecting' | 'ready' | 'reconnecting' | 'closed';

export interface McpConnectionOptions {
  /** Bound on spawn/connect + initialize handshake + first tool listing. */
  connectTimeoutMs: number;
  /**
   * Bound on the very first connect, which may include installing the server
   * (`npx -y` on a cold cache). The worker start waits `connectTimeoutMs` and
   * then lets it go on in the background, logged as "still starting (first
   * connect)". Defaults to `connectTimeoutMs`; a server's own
   * `firstConnectTimeoutMs` wins.
   */
  firstConnectTimeoutMs?: number;
  /** How often the tool list is fetched again besides `notifications/tools/list_changed`. */
  refreshIntervalMs: number;
  reconnect?: { initialDelayMs: number; maxDelayMs: number };
  logger: McpLogger;
  onToolsChanged?: (connection: McpConnection) => void;
  /** Resources and elicitation (mcp-protocol-extras.ts): set up on each new client, told when it is ready. */
  protocol?: { configure(client: Client): void; connected(client: Client): void };
  /** Token store for HTTP servers that declare `oauth`. */
  oauth?: McpOAuth;
}

export interface McpCallOptions {
  /** Aborting sends `notifications/cancelled` to the server. */
  signal: AbortSignal;
  /** Total budget for the call, waiting for a reconnect included. */
  timeoutMs: number;
  onprogress?: (progress: Progress) => void;
}

const CLIENT_INFO = { name: 'durable-agent', version: '0.1.0' };

/** A connection that stayed up this long starts the reconnect backoff from its first step when it drops. */
const STABLE_CONNECTION_MS = 30_000;
/** Tool calls timing out one after another before the server is pinged (and reconnected if silent). */
const TIMEOUTS_BEFORE_PROBE = 3;

/** A call to a server marked down tries to reconnect at once, unless an attempt failed this recently (its error is fresh). */
const ON_DEMAND_MIN_SPACING_MS = 250;

async function closeQuietly(client: Client): Promise<void> {
  await client.close().catch(() => undefined);
}

/**
 * One MCP server: one long-lived connection shared by every session of the
 * worker. Connects with a timeout, keeps the tool list fresh
 * (`list_changed` and an interval), reconnects with backoff for as long as
 * the worker runs, and re-initializes an HTTP session the server forgot.
 */
export class McpConnection {
  private client: Client | null = null;
  private handle: McpTransportHandle | null = null;
  private state: McpConnectionStatus = 'connecting';
  private toolList: Tool[] = [];
  /** The output schema checks of the tools held (listAllTools lists without the SDK's own). */
  private outputChecks = new Map<string, JsonSchemaValidator<unknown>>();
  private toolsHash = '';
  private lastErrorText: string | undefined;
  private attempt = 0;
  /** When the live connection became ready. */
  private readySince = 0;
  /** Calls that timed out one after another on the live connection. */
  private timeoutsInARow = 0;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private refreshTimer: NodeJS.Timeout | undefined;
  private connecting: Promise<void> | null = null;
  private refreshing: Promise<void> | null = null;
  private refreshAgain = false;
  private probing: Promise<void> | null = null;
  private readonly waiters = new Set<() => void>();
  private readonly log: McpLogger;
  /** Progress is delivered before the result it precedes (mcp-progress-routing.ts). */
  private readonly progress = new ProgressRouter();
  /** A connect still in its handshake, so close() can abort it. */
  private pending: { client: Client; handle: McpTransportHandle } | null = null;
  private lastFailedAt = 0;
  private readonly withheldReported = new Set<string>();
  private readonly oauth: McpOAuthProvider | undefined;
  /** How many times a connection was established (1 after a clean start). */
  connectCount = 0;
  private readonly metrics: McpConnectionMetrics;
  /** When a `list_changed` arrived that no fetch has answered yet. */
  private changeNoticedAt: number | undefined;

  constructor(readonly server: McpServerConfig, private readonly options: McpConnectionOptions) {
    this.log = serverLogger(options.logger, server.name, server.secrets);
    this.metrics = new McpConnectionMetrics(server.name);
    this.oauth = options.oauth?.providerFor(server, { log: this.log, onAuthorized: () => this.reconnectNow() });
  }

  /** The server waits for a person to authorize it (`npm run mcp:authorize -- <server>`). */
  get needsAuthorization(): boolean {
    return this.oauth?.awaitingAuthorization ?? false;
  }

  get name(): string {
    return this.server.name;
  }
  get status(): McpConnectionStatus {
    return this.state;
  }
  /** The last tool list the server gave; kept while it is down so its tools fail clearly instead of vanishing. */
  get tools(): readonly Tool[] {
    return this.toolList;
  }
  get lastError(): string | undefined {
    return this.lastErrorText;
  }
  /** The server process, for stdio servers. */
  get pid(): number | null {
    return this.handle?.pid() ?? null;
  }

  /** First connection attempt. Never throws: a server that is down is retried in the background. */
  async start(): Promise<boolean> {
    const { connectTimeoutMs } = this.options;
    const firstTimeoutMs = Math.max(connectTimeoutMs, this.server.firstConnectTimeoutMs ?? this.options.firstConnectTimeoutMs ?? connectTimeoutMs);
    const first = this.connect(firstTimeoutMs).then(
      () => {
        this.log.info(`connected (${this.handle?.kind}), ${this.toolList.length} tools`);
        return true;
      },
      (err: unknown) => {
        if (this.isClosed()) return false;
        // The provider has logged the one line a person needs (with the URL to open).
        if (this.oauth?.awaitingAuthorization) this.disconnected(this.oauth.waitingText);
        else {
          this.log.warn(`could not connect: ${errorText(err)}; retrying in the background`);
          this.disconnected(`could not connect: ${errorText(err)}`);
        }
        return false;
      },
    );
    if (firstTimeoutMs <= connectTimeoutMs) return first;
    // A first connect may be an install (npx -y on a cold cache): the worker starts without it, and
    // the connect goes on in the background instead of being killed and retried from scratch.
    let timer: NodeJS.Timeout | undefined;
    const early = await Promise.race([first, new Promise<'pending'>((r) => (timer = setTimeout(() => r('pending'), connectTimeoutMs)))]);
    clearTimeout(timer);
    if (early !== 'pending') return early;
    this.lastErrorText = `still starting (first connect): no answer to initialize after ${connectTimeoutMs} ms; waiting up to ${firstTimeoutMs} ms`;
    this.log.warn(`${this.lastErrorText} in the background (a server run with npx -y may be installing; pre-install it, see docs/mcp.md)`);
    return false;
  }

  /** Calls a tool, waiting briefly for a reconnect, and re-initializing once if the HTTP session is gone. */
  async callTool(name: string, args: Record<string, unknown>, options: McpCallOptions): Promise<CallToolResult> {
    const started = Date.now();
    const remaining = () => Math.max(1, options.timeoutMs - (Date.now() - started));
    // A call the server is not there to take (down, or waiting for authorization) is an error of its class too.
    const ready = async (timeoutMs: number) => {
      try {
        return await this.readyClient(timeoutMs, options.signal);
      } catch (err) {
        this.metrics.call('error', errorClassOf(err, options.signal));
        throw err;
      }
    };
    let client = await ready(Math.min(this.options.connectTimeoutMs, options.timeoutMs / 2));
    // Our own progress token, not the SDK's onprogress: see mcp-progress-routing.ts.
    const progress = options.onprogress ? this.progress.register(options.onprogress) : undefined;
    const meta = progress ? { _meta: { progressToken: progress.token } } : {};
    const call = async (c: Client) => {
      const result = (await c.callTool({ name, arguments: args, ...meta }, undefined, { signal: options.signal, timeout: remaining() })) as CallToolResult;
      this.checkOutput(name, result);
      this.metrics.call(result.isError ? 'tool_error' : 'ok');
      if (this.client === c) this.timeoutsInARow = 0;
      return result;
    };
    try {
      return await call(client);
    } catch (err) {
      this.metrics.call('error', errorClassOf(err, options.signal));
      if (options.signal.aborted) throw err;
      if (isSessionNotFound(err)) {
        await this.reinitialize(client, 'the server no longer knows our HTTP session (404)');
        client = await ready(remaining());
        return await call(client);
      }
      if (this.oauth?.awaitingAuthorization) {
        // The grant was refused and could not be refreshed: wait for a person, as at start.
        if (this.client === client) {
          this.client = null;
          void closeQuietly(client);
          this.disconnected(this.oauth.waitingText);
        }
        throw new McpUnavailableError(this.name, this.oauth.waitingText);
      }
      if (isConnectionFailure(err)) this.suspect(client, err);
      else if (err instanceof McpError && err.code === ErrorCode.RequestTimeout && this.client === client && ++this.timeoutsInARow >= TIMEOUTS_BEFORE_PROBE) {
        // A server that answers nothing (hung, stopped) times every call out and is never "disconnected":
        // after a few timeouts in a row a ping decides, and a silent one is reconnected.
        this.timeoutsInARow = 0;
        this.suspect(client, err);
      }
      throw err;
    } finally {
      progress?.dispose();
    }
  }

  /** Runs one request (resources, prompts) on the live client, waiting briefly for a reconnect like a tool call. */
  async withClient<T>(timeoutMs: number, signal: AbortSignal | undefined, fn: (client: Client, timeoutMs: number) => Promise<T>): Promise<T> {
    const started = Date.now();
    const client = await this.readyClient(Math.min(this.options.connectTimeoutMs, timeoutMs / 2), signal ?? new AbortController().signal);
    try {
      return await fn(client, Math.max(1, timeoutMs - (Date.now() - started)));
    } catch (err) {
      if (isConnectionFailure(err)) this.suspect(client, err);
      throw err;
    }
  }

  /**
   * Fetches the tool list now (also done on `list_changed` and on the interval).
   * A request during a fetch runs one more fetch after it: the running one may
   * have been answered before the change it is asked about.
   */
  async refreshTools(reason = 'requested'): Promise<void> {
    if (this.refreshing) {
      this.refreshAgain = true;
      return this.refreshing;
    }
    this.refreshing = (async () => {
      do {
        this.refreshAgain = false;
        await this.doRefresh(reason);
      } while (this.refreshAgain);
    })().finally(() => {
      this.refreshing = null;
    });
    return this.refreshing;
  }

  async close(): Promise<void> {
    this.state = 'closed';
    this.metrics.close();
    this.oauth?.close();
    clearTimeout(this.reconnectTimer);
    clearInterval(this.refreshTimer);
    for (const wake of this.waiters) wake();
    // A connect still in its handshake (a server that never answers initialize, an npx install)
    // is aborted, not waited for: shutdown must not last a connect timeout.
    const pending = this.pending;
    this.pending = null;
    if (pending) {
      const pid = pending.handle.pid();
      if (pid) {
        try {
          process.kill(pid, 'SIGTERM');
        } catch {
          // already gone
        }
      }
      await closeQuietly(pending.client);
    }
    await this.connecting?.catch(() => undefined);
    const client = this.client;
    this.client = null;
    if (!client) return;
    const transport = this.handle?.transport;
    if (this.handle?.kind === 'http' && transport && 'terminateSession' in transport) {
      // Polite: tell the server it can drop our session. Bounded, because it may be gone already.
      await withTimeout((transport as { terminateSession(): Promise<void> }).terminateSession(), 1_000, 'terminate').catch(() => undefined);
    }
    await closeQuietly(client);
  }

  /** A method, not an inline comparison: the state changes across awaits, which narrowing does not see. */
  private isClosed(): boolean {
    return this.state === 'closed';
  }

  /** One connect at a time: every caller (start, backoff timer, a waiting call, a 404) shares it. */
  private connect(timeoutMs = this.options.connectTimeoutMs): Promise<void> {
    this.connecting ??= this.connectOnce(timeoutMs)
      .catch((err: unknown) => {
        this.lastFailedAt = Date.now();
        throw err;
      })
      .finally(() => {
        this.connecting = null;
      });
    return this.connecting;
  }

  private async connectOnce(timeout: number): Promise<void> {
    if (this.isClosed()) throw new McpUnavailableError(this.name, 'the connection pool is closed');
    const handle = createTransport(this.server, this.log, this.oauth);
    const client = new Client(CLIENT_INFO, { capabilities: {}, jsonSchemaValidator: safeOutputValidator });
    this.options.protocol?.configure(client);
    this.progress.attach(handle.transport);
    const pending = { client, handle };
    this.pending = pending;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      if (this.client !== client) return;
      this.changeNoticedAt ??= performance.now();
      void this.refreshTools('list_changed');
    });
    client.onclose = () => this.onClosed(client);
    client.onerror = (err) => this.onError(client, err);
    let tools: { tools: Tool[]; refused: RefusedTool[] };
    try {
      tools = await withTimeout(
        client.connect(handle.transport, { timeout }).then(() => listAllTools(client, timeout)),
        timeout,
        `connect and handshake did not finish within ${timeout} ms`,
        () => void closeQuietly(client),
      );
    } catch (err) {
      await closeQuietly(client);
      if (this.isClosed()) throw new McpUnavailableError(this.name, 'the worker is shutting down');
      const tail = handle.stderrTail();
      throw new Error(`${errorText(err)}${tail ? `; server stderr: ${tail.slice(-500)}` : ''}`);
    } finally {
      if (this.pending === pending) this.pending = null;
    }
    if (this.isClosed()) {
      await closeQuietly(client);
      throw new McpUnavailableError(this.name, 'the connection pool is closed');
    }
    this.client = client;
    this.handle = handle;
    this.state = 'ready';
    // The backoff starts again only once this connection has stayed up (see disconnected): a server that
    // exits right after its handshake is otherwise respawned at the first step's delay for ever.
    this.readySince = Date.now();
    this.timeoutsInARow = 0;
    this.lastErrorText = undefined;
    this.connectCount += 1;
    this.metrics.connected();
    this.options.protocol?.connected(client);
    this.setTools(tools);
    clearInterval(this.refreshTimer);
    this.refreshTimer = setInterval(() => void this.refreshTools('interval'), this.options.refreshIntervalMs);
    this.refreshTimer.unref();
    for (const wake of this.waiters) wake();
  }

  private async readyClient(waitMs: number, signal: AbortSignal): Promise<Client> {
    if (this.state === 'reconnecting' && !this.client && !this.connecting) {
      // Marked down: try now rather than at the next backoff step (which may be 30 s away), unless an
      // attempt failed a moment ago, whose error is then the answer.
      if (Date.now() - this.lastFailedAt < ON_DEMAND_MIN_SPACING_MS) {
        throw new McpUnavailableError(this.name, `${this.lastErrorText ?? 'not connected'}; reconnecting in the background`);
      }
      this.reconnectForCall();
    }
    if (this.state !== 'ready' || !this.client) {
      await waitFor(
        (wake) => {
          this.waiters.add(wake);
          return () => this.waiters.delete(wake);
        },
        waitMs,
        signal,
      );
    }
    signal.throwIfAborted();
    if (this.state === 'closed') throw new McpUnavailableError(this.name, 'the worker is shutting down');
    if (this.state === 'connecting') {
      throw new McpUnavailableError(this.name, this.lastErrorText ?? 'still starting (first connect)');
    }
    if (this.state !== 'ready' || !this.client) {
      throw new McpUnavailableError(this.name, `${this.lastErrorText ?? 'not connected'}; reconnecting in the background`);
    }
    return this.client;
  }

  /**
   * A call found the server marked down: one connect attempt now, shared by
   * every caller that arrives meanwhile (they wait on `connecting`). Waiting
   * callers are woken when it fails too, so they answer with its fresh error
   * instead of waiting out their budget; the backoff schedule then resumes.
   */
  private reconnectForCall(): void {
    clearTimeout(this.reconnectTimer);
    this.reconnectTimer = undefined;
    const started = Date.now();
    this.connect().then(
      () => this.log.info(`reconnected at a call's request in ${Date.now() - started} ms, ${this.toolList.length} tools`),
      (err: unknown) => {
        if (this.isClosed()) return;
        if (this.state !== 'ready') this.lastErrorText = errorText(err);
        this.log.warn(`reconnect attempt at a call's request failed: ${errorText(err)}`);
        for (const wake of this.waiters) wake();
        if (this.state !== 'ready') this.scheduleReconnect();
      },
    );
  }

  private async doRefresh(reason: string): Promise<void> {
    const client = this.client;
    if (!client) return;
    try {
      const noticed = this.changeNoticedAt;
      const tools = await listAllTools(client, this.options.connectTimeoutMs);
      if (this.client !== client) return;
      const changed = this.setTools(tools);
      this.metrics.refreshed(reason, changed, noticed);
      // This fetch began after the notice: the catalog now holds what it announced.
      if (this.changeNoticedAt === noticed) this.changeNoticedAt = undefined;
    } catch (err) {
      this.log.warn(`could not refresh the tool list (${reason}): ${errorText(err)}`);
      if (isSessionNotFound(err)) await this.reinitialize(client, 'the server no longer knows our HTTP session (404)');
      else if (isConnectionFailure(err)) this.suspect(client, err);
    }
  }

  /**
   * A result against the output schema its tool declares, as the SDK checks it when it lists the tools itself
   * (same errors, so they are told apart as a result that does not fit, after the tool ran: mcp-errors.ts).
   */
  private checkOutput(name: string, result: CallToolResult): void {
    const check = this.outputChecks.get(name);
    if (!check || result.isError) return;
    if (result.structuredContent === undefined) {
      throw new McpError(ErrorCode.InvalidRequest, `Tool ${name} has an output schema but did not return structured content`);
    }
    const verdict = check(result.structuredContent);
    if (!verdict.valid) throw new McpError(ErrorCode.InvalidParams, `Structured content does not match the tool's output schema: ${verdict.errorMessage}`);
  }

  /** Keeps the server's tools; true when the list differs from the one held (not on the first list). */
  private setTools({ tools: listed, refused }: { tools: Tool[]; refused: RefusedTool[] }): boolean {
    const withhold = (name: string, why: string): void => {
      if (this.withheldReported.has(name)) return;
      this.withheldReported.add(name);
      this.log.warn(`tool "${name}" is not offered: ${why}`);
    };
    for (const { name, why } of refused) withhold(name, why);
    let tools = listed.filter((tool) => {
      const why = unsupportedReason(tool);
      if (why !== undefined) withhold(tool.name, why);
      return why === undefined;
    });
    // Counted after the server's allow and deny lists: the tools an operator picked are the ones offered.
    const offered = selectTools(this.server, tools);
    if (offered.length > MAX_TOOLS_PER_SERVER) {
      const left = offered.slice(MAX_TOOLS_PER_SERVER);
      const leftNames = new Set(left.map((t) => t.name));
      tools = tools.filter((t) => !leftNames.has(t.name));
      const key = `more than ${MAX_TOOLS_PER_SERVER}: ${left.length} from ${left[0]!.name}`;
      if (!this.withheldReported.has(key)) {
        this.withheldReported.add(key);
        this.log.warn(`the server offers ${offered.length} tools after allowTools and denyTools; the first ${MAX_TOOLS_PER_SERVER} are offered, not ${left.map((t) => `"${t.name}"`).slice(0, 10).join(', ')}${left.length > 10 ? ` and ${left.length - 10} more` : ''} (narrow it with allowTools)`);
      }
    }
    const hash = hashOf(tools);

    if (hash === this.toolsHash) return false;
    const first = this.toolsHash === '';
    this.toolList = tools;
    this.outputChecks = new Map(tools.filter((t) => t.outputSchema !== undefined).map((t) => [t.name, safeOutputValidator.getValidator(t.outputSchema as JsonSchemaType)]));
    this.toolsHash = hash;
    if (!first) this.log.info(`tool list changed: ${tools.map((t) => t.name).join(', ')}`);
    this.options.onToolsChanged?.(this);
    return !first;
  }

  private onClosed(client: Client): void {
    if (this.client !== client) return;
    this.client = null;
    const tail = this.handle?.stderrTail();
    const why = this.handle?.kind === 'stdio' ? 'the server process exited' : 'the connection closed';
    this.disconnected(`${why}${tail ? ` (stderr: ${tail.slice(-300)})` : ''}`);
  }

  private onError(client: Client, err: Error): void {
    if (this.client !== client || ProgressRouter.isOwnTokenNoise(err)) return;
    this.log.debug(`transport error: ${errorText(err)}`);
    // HTTP has no process to watch: a broken notification stream is a hint, confirmed by a ping.
    if (this.handle?.kind === 'http') this.suspect(client, err);
  }

  /** Pings the server after a suspicious error: a forgotten session is re-initialized, silence means reconnect. */
  private suspect(client: Client, cause: unknown): void {
    if (this.client !== client || this.probing) return;
    this.probing = (async () => {
      try {
        await client.ping({ timeout: this.options.connectTimeoutMs });
      } catch (err) {
        if (this.client !== client) return;
        if (isSessionNotFound(err)) {
          await this.reinitialize(client, 'the server no longer knows our HTTP session (404)');
        } else {
          this.client = null;
          void closeQuietly(client);
          this.disconnected(`${errorText(err)} (after ${errorText(cause)})`);
        }
      }
    })().finally(() => {
      this.probing = null;
    });
  }

  private async reinitialize(stale: Client, reason: string): Promise<void> {
    if (this.client === stale) {
      this.client = null;
      if (this.state === 'ready') this.metrics.disconnected();
      this.state = 'reconnecting';
      this.lastErrorText = reason;
      clearInterval(this.refreshTimer);
      void closeQuietly(stale);
      this.log.info(`${reason}; initializing a new session`);
      try {
        await this.connect();
      } catch (err) {
        this.disconnected(`re-initialization failed: ${errorText(err)}`);
      }
      return;
    }
    if (this.connecting) await this.connecting.catch(() => undefined);
  }

  private disconnected(reason: string): void {
    if (this.state === 'closed') return;
    if (this.state === 'ready' && Date.now() - this.readySince >= STABLE_CONNECTION_MS) this.attempt = 0;
    if (this.state === 'ready') {
      this.log.warn(`disconnected: ${reason}; reconnecting with backoff`);
      this.metrics.disconnected();
    }
    this.state = 'reconnecting';
    this.lastErrorText = reason;
    clearInterval(this.refreshTimer);
    this.scheduleReconnect();
  }

  /** Tries at once instead of at the next backoff step: the grant a person just gave is in the store. */
  private reconnectNow(): void {
    if (this.state !== 'reconnecting' || this.connecting) return;
    clearTimeout(this.reconnectTimer);
    this.reconnectTimer = undefined;
    this.attempt = 0;
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.state === 'closed' || this.reconnectTimer !== undefined) return;
    const { initialDelayMs, maxDelayMs } = this.options.reconnect ?? { initialDelayMs: 250, maxDelayMs: 30_000 };
    const delay = backoffDelay(this.attempt++, initialDelayMs, maxDelayMs);
    this.reconnectTimer = setTimeout(async () => {
      this.reconnectTimer = undefined;
      if (this.state === 'closed' || this.state === 'ready') return;
      const attempts = this.attempt;
      try {
        await this.connect();
        this.log.info(`reconnected after ${attempts} attempt(s), ${this.toolList.length} tools`);
      } catch (err) {
        if (this.isClosed()) return;
        if (this.oauth?.awaitingAuthorization) {
          this.lastErrorText = this.oauth.waitingText;
          this.log.debug(`reconnect attempt ${this.attempt}: still ${this.lastErrorText}`);
        } else {
          this.lastErrorText = errorText(err);
          this.log.warn(`reconnect attempt ${this.attempt} failed: ${this.lastErrorText}`);
        }
        this.scheduleReconnect();
      }
    }, delay);
    this.reconnectTimer.unref();
  }
}

/** A failed call's class, for the error metric. */
function errorClassOf(err: unknown, signal: AbortSignal): string {
  if (signal.aborted) return 'aborted';
  if (err instanceof McpUnavailableError) return 'unavailable';
  if (isSessionNotFound(err)) return 'session_lost';
  if (err instanceof McpError && err.code === ErrorCode.RequestTimeout) return 'timeout';
  if (isConnectionFailure(err)) return 'connection';
  return 'protocol';
}
