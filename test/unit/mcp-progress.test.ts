import type { Client } from '@temporalio/client';
import { MockActivityEnvironment } from '@temporalio/testing';
import { progressIntervalMs, progressReporter } from '../../activities/mcp/mcp-progress';
import type { ToolRunContext } from '../../activities/tools/native-tool';

/** A client that records the progress signals it is asked to send. */
function recordingClient(sent: Array<{ seq: number; progress: number; total?: number }>): Client {
  const handle = { signal: async (_def: unknown, arg: { seq: number; progress: number; total?: number }) => void sent.push(arg) };
  return { workflow: { getHandle: () => handle }, withAbortSignal: <R>(_signal: AbortSignal, fn: () => R): R => fn() } as unknown as Client;
}

const ctx: ToolRunContext = {
  signal: new AbortController().signal,
  idempotencyKey: 's:turn-1:1:call_1',
  sessionId: 's',
  turnId: 'turn-1',
  toolCallId: 'call_1',
  namespace: { tenant: 'acme', user: 'ana' },
  heartbeat: () => undefined,
};

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('MCP progress on its way to the session', () => {
  it('a server that reports completion over and over sends one signal, then the newest when the interval has passed', async () => {
    const sent: Array<{ seq: number; progress: number; total?: number }> = [];
    const env = new MockActivityEnvironment({ workflowExecution: { workflowId: 'session-s', runId: 'r' } }, { client: recordingClient(sent) });
    await env.run(async () => {
      const reporter = progressReporter(ctx, (t) => t);
      // Before, each of these went out at once: progress at its total skipped the interval.
      for (let i = 0; i < 5_000; i++) reporter.onprogress({ progress: 10 + i, total: 10 });
      await pause(250);
      expect(sent.map((s) => s.progress)).toEqual([10, 5_009]);
      reporter.onprogress({ progress: 6_000, total: 10 });
      await reporter.close();
      // Held back, the newest goes out when the call ends; later notifications are dropped.
      reporter.onprogress({ progress: 7_000, total: 10 });
      await pause(150);
      expect(sent.map((s) => s.progress)).toEqual([10, 5_009, 6_000]);
      expect(sent.map((s) => s.seq)).toEqual([1, 2, 3]);
    });
  });

  it('signals grow apart with the call: a ten-minute call sends a few hundred, not 6,000', () => {
    expect(progressIntervalMs(0)).toBe(100);
    expect(progressIntervalMs(50)).toBe(500);
    expect(progressIntervalMs(10_000)).toBe(5_000);
    let at = 0;
    let sent = 0;
    while (at < 600_000) {
      at += progressIntervalMs(sent);
      sent += 1;
    }
    expect(sent).toBeLessThan(400);
  });
});
