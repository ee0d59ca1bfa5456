import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { McpLogger } from '../../activities/mcp';

/** The example report server's entry point, run by node with the tsx loader (one process, so a kill is a real crash). */
export const REPORT_SERVER_MAIN = resolve(__dirname, '../../examples/mcp-report-server/main.ts');
export const PROJECT_ROOT = resolve(__dirname, '../..');

export function tempDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), `${prefix}-`));
}

/** A stdio server entry for the MCP config, recording its events in `eventsPath`. */
export function stdioReportServer(eventsPath: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    command: process.execPath,
    args: ['--import', 'tsx', REPORT_SERVER_MAIN, '--stdio'],
    cwd: PROJECT_ROOT,
    env: { MCP_REPORT_EVENTS: eventsPath },
    ...extra,
  };
}

export function writeMcpConfig(dir: string, servers: Record<string, unknown>, name = 'mcp.json'): string {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify({ mcpServers: servers }, null, 2));
  return path;
}

export interface ServerEvent {
  event: string;
  pid: number;
  tool?: string;
  [key: string]: unknown;
}

export function readServerEvents(path: string): ServerEvent[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as ServerEvent);
}

export { freePort } from './net';

/** The report server over HTTP as a real child process, on a fixed port so it can be restarted in place. */
export class HttpReportServer {
  private child: ChildProcess | null = null;
  url = '';

  constructor(private readonly options: { port: number; eventsPath: string; tokenEnv?: string; env?: Record<string, string> }) {}

  get pid(): number | undefined {
    return this.child?.pid;
  }

  async start(): Promise<string> {
    const args = ['--import', 'tsx', REPORT_SERVER_MAIN, '--http', '--port', String(this.options.port)];
    if (this.options.tokenEnv) args.push('--token-env', this.options.tokenEnv);
    const child = spawn(process.execPath, args, {
      cwd: PROJECT_ROOT,
      env: { ...process.env, ...this.options.env, MCP_REPORT_EVENTS: this.options.eventsPath },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    this.url = await new Promise<string>((resolveUrl, reject) => {
      const timer = setTimeout(() => reject(new Error(`report server did not start: ${stderr}`)), 20_000);
      child.stdout?.on('data', (d: Buffer) => {
        const match = /listening (\S+)/.exec(d.toString());
        if (match?.[1]) {
          clearTimeout(timer);
          resolveUrl(match[1]);
        }
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`report server exited with ${code}: ${stderr}`));
      });
    });
    return this.url;
  }

  signal(signal: NodeJS.Signals): void {
    this.child?.kill(signal);
  }

  /** SIGKILL, and wait until the process is gone. */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited;
    this.child = null;
  }
}

/** A logger that keeps every line, for asserting what was (and was not) logged. */
export function recordingLogger(): McpLogger & { lines: string[] } {
  const lines: string[] = [];
  const keep = (level: string) => (m: string) => {
    lines.push(`${level} ${m}`);
  };
  return { lines, debug: keep('debug'), info: keep('info'), warn: keep('warn'), error: keep('error') };
}

/** The glossary server (one tool whose description is configurable) as a stdio entry; see glossary-mcp-server.ts. */
export function stdioGlossaryServer(eventsPath: string, description: string): Record<string, unknown> {
  return {
    command: process.execPath,
    args: ['--import', 'tsx', resolve(__dirname, 'glossary-mcp-server.ts')],
    cwd: PROJECT_ROOT,
    env: { GLOSSARY_EVENTS: eventsPath, GLOSSARY_DESCRIPTION: description },
  };
}
