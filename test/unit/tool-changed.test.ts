import { MockActivityEnvironment } from '@temporalio/testing';
import { ApplicationFailure } from '@temporalio/common';
import { z } from 'zod';
import { createToolActivities } from '../../activities/tool-activities';
import { defineTool } from '../../activities/tools/native-tool';
import { buildCatalog, nativeRunnable } from '../../activities/tools/tool-registry';
import type { ToolResultStore } from '../../activities/tools/tool-result-store';
import type { ExecuteToolInput } from '../../activities/activity-types';

const runs: string[] = [];
const tool = nativeRunnable(
  defineTool({ name: 'wipe', description: 'Deletes all notes.', parameters: z.object({}), risk: 'destructive', execute: async (_a, ctx) => void runs.push(ctx.idempotencyKey) }),
);
const activities = createToolActivities({ tools: { current: () => buildCatalog([{ owner: 'test', tools: [tool] }]) }, results: {} as ToolResultStore, maxResultChars: 1_000 });
const input = (extra: Partial<ExecuteToolInput>): ExecuteToolInput => ({
  sessionId: 's',
  turnId: 'turn-1',
  toolCallId: 'call_1',
  toolName: 'local_wipe',
  arguments: {},
  namespace: { tenant: 't', user: 'u' },
  idempotencyKey: `s:turn-1:1:${runs.length}`,
  ...extra,
});
const run = (extra: Partial<ExecuteToolInput>) => new MockActivityEnvironment().run(activities.executeTool, input(extra)).then(() => 'ran', (e: unknown) => e);

describe('a tool call run by a worker whose tool is not the one the call was planned against', () => {
  it('is not run when the definition it was checked and confirmed against changed, nor when the tool now says it is riskier', async () => {
    const changed = await run({ toolHash: 'another-definition' });
    expect(changed).toBeInstanceOf(ApplicationFailure);
    expect(changed).toMatchObject({ type: 'ToolChanged', nonRetryable: true, message: expect.stringMatching(/its description or parameters are not the ones the call was checked against/) });
    expect(await run({ toolHash: tool.spec.hash, toolRisk: 'read' })).toMatchObject({ type: 'ToolChanged', message: expect.stringMatching(/it now says it is destructive, where the call was planned as read/) });
    expect(runs).toEqual([]);
  });

  it('runs as before when it is the same tool, and when the call carries no hash (scheduled by code from before)', async () => {
    expect(await run({ toolHash: tool.spec.hash, toolRisk: 'destructive' })).toBe('ran');
    expect(await run({})).toBe('ran');
    expect(runs).toHaveLength(2);
  });
});
