/**
 * An example MCP server of ours: internal reports, plus tools that exist for
 * tests and benchmarks (noop, slow, hang, fail, a tool added at runtime, a
 * destructive one).
 *
 *   tsx examples/mcp-report-server/main.ts --stdio
 *   tsx examples/mcp-report-server/main.ts --http --port 3333 [--host 127.0.0.1] [--token-env REPORT_TOKEN]
 *
 * Signals: SIGUSR2 adds the `summarize_quarter` tool (announced with
 * notifications/tools/list_changed); SIGUSR1 (HTTP) forgets every session.
 * Set MCP_REPORT_EVENTS to a file path to record what the server saw.
 */
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { startHttpHost } from './http-host';
import { recordEvent } from './event-log';
import { ReportServerState, buildReportServer } from './report-server';

interface Cli {
  mode: 'stdio' | 'http';
  port: number;
  host: string;
  tokenEnv?: string;
}

function parseArgs(argv: string[]): Cli {
  const value = (flag: string) => {
    const i = argv.indexOf(flag);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const http = argv.includes('--http');
  if (!http && !argv.includes('--stdio')) throw new Error('usage: main.ts --stdio | --http --port N [--host H] [--token-env VAR]');
  const port = Number(value('--port') ?? 0);
  if (!Number.isInteger(port) || port < 0) throw new Error('--port must be an integer');
  return { mode: http ? 'http' : 'stdio', port, host: value('--host') ?? '127.0.0.1', tokenEnv: value('--token-env') };
}

async function main(): Promise<void> {
  const cli = parseArgs(process.argv.slice(2));
  const state = new ReportServerState();
  process.on('SIGUSR2', () => state.enableExtraTool());
  if (cli.mode === 'stdio') {
    await buildReportServer(state).connect(new StdioServerTransport());
    // The client went away: nothing left to serve.
    process.stdin.on('end', () => process.exit(0));
    recordEvent({ event: 'started', mode: 'stdio' });
    return;
  }
  const token = cli.tokenEnv ? process.env[cli.tokenEnv] : undefined;
  if (cli.tokenEnv && !token) throw new Error(`--token-env ${cli.tokenEnv}: the variable is not set`);
  const host = await startHttpHost(state, { port: cli.port, host: cli.host, token });
  process.on('SIGUSR1', () => host.forgetSessions());
  process.on('SIGTERM', () => host.server.close(() => process.exit(0)));
  recordEvent({ event: 'started', mode: 'http', url: host.url });
  // Tests and scripts wait for this line to learn the port.
  process.stdout.write(`listening ${host.url}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
