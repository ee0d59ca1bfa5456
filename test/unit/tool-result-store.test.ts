import { MockActivityEnvironment } from '@temporalio/testing';
import { z } from 'zod';
import { createToolActivities } from '../../activities/tool-activities';
import { defineTool } from '../../activities/tools/native-tool';
import { buildCatalog, nativeRunnable } from '../../activities/tools/tool-registry';
import { MAX_STORED_RESULT_CHARS, type ToolResultStore } from '../../activities/tools/tool-result-store';
import type { ExecuteToolResult } from '../../activities/activity-types';

/*
 * What happens to a tool's result after the tool ran: nothing from there on
 * may fail the activity (a retry would run the tool again). The store is a
 * fault injector: it records what it was given, or fails.
 */

function activitiesWith(resultChars: number, store: Pick<ToolResultStore, 'save'>, heartbeatIntervalMs?: number) {
  const runs: string[] = [];
  const tool = defineTool({
    name: 'big_write',
    description: 'Writes, then answers with a long report. For tests.',
    parameters: z.object({}),
    risk: 'write',
    async execute(_args, ctx) {
      runs.push(ctx.idempotencyKey);
      return 'r'.repeat(resultChars);
    },
  });
  const tools = buildCatalog([{ owner: 'test', tools: [nativeRunnable(tool)] }]);
  const activities = createToolActivities({ tools: { current: () => tools }, results: store as ToolResultStore, maxResultChars: 1_000, ...(heartbeatIntervalMs ? { heartbeatIntervalMs } : {}) });
  const input = { sessionId: 's', turnId: 'turn-1', toolCallId: 'call_1', toolName: 'local_big_write', arguments: {}, namespace: { tenant: 't', user: 'u' }, idempotencyKey: 's:turn-1:1:call_1' };
  const env = new MockActivityEnvironment();
  return { runs, env, run: () => env.run(activities.executeTool, input) as Promise<ExecuteToolResult> };
}

describe('a long tool result, after the tool ran', () => {
  it('past what one MongoDB document holds: its start is stored, marked, and the model is told so', async () => {
    const saved: string[] = [];
    const { runs, run } = activitiesWith(MAX_STORED_RESULT_CHARS + 500_000, { save: async (_k, _t, content) => void saved.push(content) });
    const result = await run();
    expect(runs).toHaveLength(1);
    expect(saved).toHaveLength(1);
    expect(saved[0]!.startsWith('r'.repeat(MAX_STORED_RESULT_CHARS))).toBe(true);
    expect(saved[0]!.slice(MAX_STORED_RESULT_CHARS)).toBe(`\n[cut: the result was ${MAX_STORED_RESULT_CHARS + 500_000} characters; the first ${MAX_STORED_RESULT_CHARS} are kept]`);
    expect(result.truncated).toBe(true);
    expect(result.content.length).toBeLessThanOrEqual(1_000);
    expect(result.content).toMatch(/its first 4000000 characters are stored as tool_result s:turn-1:1:call_1\]$/);
  });

  it('when the store fails, the call still succeeds with what the model can read, saying the rest was not stored', async () => {
    const { runs, run } = activitiesWith(50_000, {
      save: async () => {
        throw new Error('connection pool closed');
      },
    });
    const result = await run();
    expect(runs).toHaveLength(1);
    expect(result.truncated).toBe(true);
    expect(result.content).toMatch(/showing 1000 of 50000 characters; the rest could not be stored\]$/);
  });

  it('heartbeats go on while a slow store takes the result (past a heartbeat timeout, a retry would run the tool again)', async () => {
    let storing = false;
    let beatsWhileStoring = 0;
    const { runs, env, run } = activitiesWith(
      50_000,
      {
        save: async () => {
          storing = true;
          await new Promise((resolve) => setTimeout(resolve, 600));
          storing = false;
        },
      },
      50,
    );
    env.on('heartbeat', () => {
      if (storing) beatsWhileStoring += 1;
    });
    const result = await run();
    expect(runs).toHaveLength(1);
    expect(result.content).toMatch(/the full result is stored as tool_result/);
    expect(beatsWhileStoring).toBeGreaterThanOrEqual(5);
  });

  it('a result that fits is stored whole, as before', async () => {
    const saved: string[] = [];
    const { run } = activitiesWith(50_000, { save: async (_k, _t, content) => void saved.push(content) });
    const result = await run();
    expect(saved[0]).toHaveLength(50_000);
    expect(result.content).toMatch(/the full result is stored as tool_result s:turn-1:1:call_1\]$/);
  });
});
