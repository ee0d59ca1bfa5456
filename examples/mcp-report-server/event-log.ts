import { appendFileSync } from 'node:fs';

/**
 * What happened inside the server (sessions initialized, calls, cancellations),
 * one JSON object per line in the file named by MCP_REPORT_EVENTS. Tests read
 * it to see what only the server can see.
 */
export function recordEvent(event: Record<string, unknown>): void {
  const path = process.env.MCP_REPORT_EVENTS;
  if (!path) return;
  appendFileSync(path, `${JSON.stringify({ at: Date.now(), pid: process.pid, ...event })}\n`);
}
