import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ElicitResultSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
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

/** Lines of the audit log resource: large on purpose, so a read of it is cut for the model and stored whole. */
export const AUDIT_LOG_LINES = 2_000;

/** Every report as a resource (`report://<name>`), a large audit log, and a prompt for a quarterly review. */
function registerResourcesAndPrompts(server: McpServer): void {
  for (const report of REPORTS) {
    server.registerResource(
      report,
      `report://${report}`,
      { title: `The ${report} report`, description: `Every quarterly figure of the ${report} report, per region, as JSON.`, mimeType: 'application/json' },
      async (uri) => {
        recordEvent({ event: 'read_resource', uri: uri.href });
        return { contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify({ report, ...queryReport(report, {}) }) }] };
      },
    );
  }
  server.registerResource(
    'audit-log',
    'report://audit-log',
    { title: 'Audit log', description: 'Every change to the reports, one line each (long).', mimeType: 'text/plain' },
    async (uri) => {
      recordEvent({ event: 'read_resource', uri: uri.href });
      const lines = Array.from({ length: AUDIT_LOG_LINES }, (_, i) => `${String(i + 1).padStart(5, '0')} report figures reviewed and signed off by the finance team`);
      return { contents: [{ uri: uri.href, mimeType: 'text/plain', text: lines.join('\n') }] };
    },
  );
  server.registerPrompt(
    'quarter_review',
    {
      title: 'Quarterly review',
      description: 'Asks for a review of one quarter across every report.',
      argsSchema: { quarter: z.enum(QUARTERS), focus: z.string().optional() },
    },
    ({ quarter, focus }) => ({
      messages: [
        {
          role: 'user',
          content: { type: 'text', text: `Review ${quarter}: compare revenue, tickets closed and headcount per region${focus ? `, focusing on ${focus}` : ''}, and name the biggest change.` },
        },
      ],
    }),
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

  registerResourcesAndPrompts(server);

  server.registerTool(
    'confirm_export',
    {
      description:
        'Exports a report after asking the user (MCP elicitation) which format they want and where to send it. ' +
        'Waits for the answer; a declined or cancelled question exports nothing.',
      inputSchema: { report: z.enum(REPORTS) },
      // Read-only and idempotent: a retried call (after a worker crash) asks again under the same question id.
      annotations: { readOnlyHint: true, idempotentHint: true },
    },
    async ({ report }, extra) => {
      recordEvent({ event: 'elicit_asked', tool: 'confirm_export', report });
      const answer = await extra.sendRequest(
        {
          method: 'elicitation/create',
          params: {
            message: `Export the ${report} report: which format, and who should receive it?`,
            requestedSchema: {
              type: 'object',
              properties: {
                format: { type: 'string', title: 'Format', enum: ['csv', 'json'] },
                recipient: { type: 'string', title: 'Recipient e-mail', format: 'email' },
              },
              required: ['format'],
            },
          },
        },
        ElicitResultSchema,
        // A person answers: give them time (the client bounds the wait itself).
        { timeout: 10 * 60_000 },
      );
      recordEvent({ event: 'elicit_answered', tool: 'confirm_export', action: answer.action, content: answer.content ?? null });
      if (answer.action !== 'accept') return text(`Export of ${report} ${answer.action === 'decline' ? 'declined' : 'cancelled'} by the user; nothing was exported.`);
      const format = String(answer.content?.format ?? 'csv');
      const recipient = answer.content?.recipient ? ` and sent to ${String(answer.content.recipient)}` : '';
      return text(`Exported ${report} as ${format}${recipient}.`);
    },
  );

  if (state.extraEnabled) registerExtraTool(server);
  state.servers.add(server);
  server.server.onclose = () => state.servers.delete(server);
  return server;
}
