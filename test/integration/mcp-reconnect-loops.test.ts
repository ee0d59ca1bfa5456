import path from 'node:path';
import { parseMcpConfig } from '../../activities/mcp/mcp-config';
import { McpConnection } from '../../activities/mcp/mcp-connection';
import { PROJECT_ROOT, recordingLogger } from '../support/mcp-servers';
import { eventually } from '../support/test-env';

/*
 * Servers that keep a connection busy without ever being useful: one that
 * exits right after each handshake, and one that stops answering. Real stdio
 * processes.
 */

const stdio = (name: string, script: string) =>
  parseMcpConfig({ mcpServers: { [name]: { command: process.execPath, args: ['--import', 'tsx', path.join(__dirname, '../support', script)], cwd: PROJECT_ROOT } } }, { env: {} }).servers[0]!;

it('a server that exits right after each handshake is reconnected with a growing backoff, not at the first step for ever', async () => {
  const logger = recordingLogger();
  const connection = new McpConnection(stdio('crashy', 'crashy-mcp-server.ts'), { connectTimeoutMs: 10_000, refreshIntervalMs: 600_000, logger, reconnect: { initialDelayMs: 50, maxDelayMs: 5_000 } });
  try {
    await connection.start();
    const reconnects = () => logger.lines.filter((l) => /reconnected after \d+ attempt/.test(l));
    await eventually(() => reconnects().length >= 3, 'three reconnects', 30_000);
    // Each reconnect is one more step of the backoff: its count of attempts keeps growing.
    expect(reconnects().slice(0, 3).map((l) => Number(/after (\d+) attempt/.exec(l)![1]))).toEqual([1, 2, 3]);
  } finally {
    await connection.close();
  }
}, 60_000);

it('a server that stops answering is pinged after three calls time out in a row, and reconnected as a new process', async () => {
  const logger = recordingLogger();
  const connection = new McpConnection(stdio('stopped', 'growing-mcp-server.ts'), { connectTimeoutMs: 2_000, refreshIntervalMs: 600_000, logger, reconnect: { initialDelayMs: 50, maxDelayMs: 500 } });
  const stopped = new Set<number>();
  try {
    expect(await connection.start()).toBe(true);
    const pid = connection.pid!;
    process.kill(pid, 'SIGSTOP');
    stopped.add(pid);
    for (let i = 0; i < 3; i++) {
      await expect(connection.callTool('grow', {}, { signal: new AbortController().signal, timeoutMs: 300 })).rejects.toThrow(/timed out/i);
    }
    await eventually(() => connection.status === 'ready' && connection.pid !== pid, 'a new process to answer', 20_000);
    expect((await connection.callTool('grow', {}, { signal: new AbortController().signal, timeoutMs: 5_000 })).isError).toBeFalsy();
  } finally {
    for (const pid of stopped) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    await connection.close();
  }
}, 60_000);
