import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { recordEvent } from './event-log';
import { QUARTERS, REGIONS, REPORTS, queryReport } from './report-data';

/** State shared by every MCP session of one server process. */
export class ReportServerState {
  readonly servers = new Set<McpServer>();
  readonly deleted = new Set<string>();
  extraEnabled = false;

  /** Adds the `summarize_quarter` tool to every live session; the SDK sends `notifications/tools/list_changed`. */
  enableExtraTool(): boolean {
    if (this.extraEnabled) return false;
    this.extraEnabled = true;
    for (const server of this.servers) registerExtraTool(server);
    recordEvent({ event: 'extra_tool_enabled' });
    return true;
  }
}

const text = (value: string): CallToolResult => ({ content: [{ type: 'text', text: value }] });

/** Resolves after `ms`, or at once when `signal` aborts (reported as false). */
function pause(ms: number, signal: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve(false);
    const timer = setTimeout(() => resolve(true), ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve(false);
    }, { once: true });
  });
}

function registerExtraTool(server: McpServer): void {
  server.registerTool(
    'summarize_quarter',
    {
      description: 'Summarizes every report for one quarter in one line per report. Added at runtime by enable_extra_tool.',
      inputSchema: { quarter: z.enum(QUARTERS) },
      annotations: { readOnlyHint: true, idempotentHint: true },
    },
    async ({ quarter }) => {
      const lines = REPORTS.map((r) => {
        const { unit, rows } = queryReport(r, { quarter });
        return `${r}: ${rows.reduce((sum, row) => sum + row.value, 0)} ${unit}`;
      });
      return text(`${quarter}\n${lines.join('\n')}`);
    },
  );
}

/** One MCP server instance (one per client session) over the shared state. */
export function buildReportServer(state: ReportServerState): McpServer {
  const server = new McpServer({ name: 'report-server', version: '1.0.0' }, { capabilities: { tools: { listChanged: true } } });
  server.server.oninitialized = () => recordEvent({ event: 'initialize', client: server.server.getClientVersion()?.name });

  server.registerTool(
    'query_report',
    {
      description:
        'Reads an internal report: quarterly figures per region. Use it for questions about revenue (kEUR), support tickets closed or headcount. ' +
        `Filter by quarter (${QUARTERS.join(', ')}) and region (${REGIONS.join(', ')}); omit a filter to get every value.`,
      inputSchema: { report: z.enum(REPORTS), quarter: z.enum(QUARTERS).optional(), region: z.enum(REGIONS).optional() },
      annotations: { title: 'Query a report', readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    },
    async ({ report, quarter, region }) => {
      recordEvent({ event: 'call', tool: 'query_report' });
      if (state.deleted.has(report)) return { content: [{ type: 'text', text: `Report "${report}" was deleted.` }], isError: true };
      const result = queryReport(report, { quarter, region });
      return { content: [{ type: 'text', text: JSON.stringify({ report, ...result }) }], structuredContent: { report, ...result } };
    },
  );

  server.registerTool(
    'noop',
    { description: 'Does nothing and answers "ok". For latency measurements.', annotations: { readOnlyHint: true, idempotentHint: true } },
    async () => text('ok'),
  );

  server.registerTool(
    'slow',
    {
      description: 'Works for `ms` milliseconds in `steps` steps, reporting progress after each. For demos and tests.',
      inputSchema: { ms: z.number().int().min(0).max(120_000), steps: z.number().int().min(1).max(100).default(4) },
      annotations: { readOnlyHint: true },
    },
    async ({ ms, steps }, extra) => {
      recordEvent({ event: 'call', tool: 'slow' });
      const token = extra._meta?.progressToken;
      for (let i = 1; i <= steps; i++) {
        if (!(await pause(ms / steps, extra.signal))) {
          recordEvent({ event: 'cancelled', tool: 'slow', step: i, reason: String(extra.signal.reason) });
          return text('cancelled');
        }
        if (token !== undefined) {
          await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: i, total: steps, message: `step ${i} of ${steps}` } });
        }
      }
      return text(`done after ${ms} ms`);
    },
  );

  server.registerTool(
    'hang',
    { description: 'Never answers until the caller cancels. For timeout and cancellation tests.', annotations: { readOnlyHint: true } },
    async (extra) => {
      recordEvent({ event: 'call', tool: 'hang' });
      await pause(10 * 60_000, extra.signal);
      recordEvent({ event: extra.signal.aborted ? 'cancelled' : 'hang_expired', tool: 'hang', reason: String(extra.signal.reason) });
      return text('cancelled');
    },
  );

  server.registerTool(
    'fail',
    {
      description: 'Always fails with the given message (an isError result). For tests.',
      inputSchema: { message: z.string().min(1) },
      annotations: { readOnlyHint: true },
    },
    async ({ message }) => ({ content: [{ type: 'text', text: message }], isError: true }),
  );

  server.registerTool(
    'export_report',
    {
      description: 'Exports a report as a CSV resource with a tiny chart image.',
      inputSchema: { report: z.enum(REPORTS) },
      annotations: { readOnlyHint: true, idempotentHint: true },
    },
    async ({ report }) => {
      const { rows } = queryReport(report, {});
      const csv = ['quarter,region,value', ...rows.map((r) => `${r.quarter},${r.region},${r.value}`)].join('\n');
      const onePixelPng = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
      return {
        content: [
          { type: 'resource', resource: { uri: `report://${report}.csv`, mimeType: 'text/csv', text: csv } },
          { type: 'image', data: onePixelPng, mimeType: 'image/png' },
        ],
      };
    },
  );

  server.registerTool(
    'enable_extra_tool',
    {
      description: 'Turns on the summarize_quarter tool (the server then announces a changed tool list).',
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
    },
    async () => text(state.enableExtraTool() ? 'summarize_quarter is now available' : 'summarize_quarter was already available'),
  );

  server.registerTool(
    'delete_report',
    {
      description: 'Deletes a report for everyone. Cannot be undone.',
      inputSchema: { report: z.enum(REPORTS) },
      annotations: { readOnlyHint: false, destructiveHint: true },
    },
    async ({ report }) => {
      recordEvent({ event: 'call', tool: 'delete_report', report });
      state.deleted.add(report);
      return text(`Report "${report}" deleted.`);
    },
  );

  if (state.extraEnabled) registerExtraTool(server);
  state.servers.add(server);
  server.server.onclose = () => state.servers.delete(server);
  return server;
}
