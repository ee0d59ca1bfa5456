import { countMetric, observeMetric, setMetric } from '../metrics';

/**
 * The figures of one MCP server's connection, on the worker's meter (labelled
 * `server`): connected state and uptime, connects and disconnects, how long a
 * reconnect took, tool list fetches, how soon a `list_changed` reached the
 * catalog, and calls by outcome and error class.
 */
export class McpConnectionMetrics {
  private readonly since = performance.now();
  private upSince: number | undefined;
  private upTotal = 0;
  private downSince: number | undefined;
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly server: string) {
    setMetric('mcpConnected', 0, this.tags, 'worker');
    // The uptime ratio moves while nothing happens: refresh it now and then.
    this.timer = setInterval(() => this.publishUptime(), 5_000);
    this.timer.unref();
  }

  private get tags() {
    return { server: this.server };
  }

  connected(): void {
    const now = performance.now();
    countMetric('mcpConnects', this.tags, 1, 'worker');
    if (this.downSince !== undefined) observeMetric('mcpReconnectSeconds', (now - this.downSince) / 1000, this.tags, 'worker');
    this.downSince = undefined;
    this.upSince ??= now;
    setMetric('mcpConnected', 1, this.tags, 'worker');
    this.publishUptime();
  }

  /** A connection that was up is lost (not a failed attempt while down). */
  disconnected(): void {
    const now = performance.now();
    if (this.upSince === undefined) return;
    this.upTotal += now - this.upSince;
    this.upSince = undefined;
    this.downSince = now;
    countMetric('mcpDisconnects', this.tags, 1, 'worker');
    setMetric('mcpConnected', 0, this.tags, 'worker');
    this.publishUptime();
  }

  refreshed(reason: string, changed: boolean, noticedAt?: number): void {
    countMetric('mcpRefreshes', { ...this.tags, reason, changed: String(changed) }, 1, 'worker');
    if (changed && noticedAt !== undefined) observeMetric('mcpSyncDelay', (performance.now() - noticedAt) / 1000, this.tags, 'worker');
  }

  call(outcome: 'ok' | 'tool_error' | 'error', errorClass?: string): void {
    countMetric('mcpCalls', { ...this.tags, outcome }, 1, 'worker');
    if (errorClass) countMetric('mcpErrors', { ...this.tags, class: errorClass }, 1, 'worker');
  }

  close(): void {
    clearInterval(this.timer);
    this.disconnectedQuietly();
  }

  private disconnectedQuietly(): void {
    if (this.upSince !== undefined) this.upTotal += performance.now() - this.upSince;
    this.upSince = undefined;
    setMetric('mcpConnected', 0, this.tags, 'worker');
    this.publishUptime();
  }

  private publishUptime(): void {
    const now = performance.now();
    const up = this.upTotal + (this.upSince !== undefined ? now - this.upSince : 0);
    const span = now - this.since;
    setMetric('mcpUptime', span > 0 ? Math.min(1, up / span) : 0, this.tags, 'worker');
  }
}
