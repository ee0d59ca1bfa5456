import { MockActivityEnvironment } from '@temporalio/testing';
import { z } from 'zod';
import { MAX_OFFERED_TOOL_BYTES, MAX_OFFERED_TOOLS, createToolActivities } from '../../activities/tool-activities';
import { defineTool } from '../../activities/tools/native-tool';
import { buildCatalog, nativeRunnable } from '../../activities/tools/tool-registry';
import type { ToolResultStore } from '../../activities/tools/tool-result-store';
import type { ToolCatalog } from '../../workflows/tool-spec';
import type { GetToolCatalogInput } from '../../activities/activity-types';

/** `count` tools, each with a description of `descriptionChars`. */
function catalogOf(count: number, descriptionChars = 20) {
  const tools = Array.from({ length: count }, (_, i) =>
    nativeRunnable(defineTool({ name: `t${String(i).padStart(3, '0')}`, description: `${i} `.padEnd(descriptionChars, 'd'), parameters: z.object({}), risk: 'read', execute: async () => 'ok' })),
  );
  const catalog = buildCatalog([{ owner: 'test', tools }]);
  return createToolActivities({ tools: { current: () => catalog }, results: {} as ToolResultStore, maxResultChars: 1_000 });
}

async function offered(activities: ReturnType<typeof catalogOf>, allow?: string[]): Promise<{ catalog: ToolCatalog; warnings: string[] }> {
  const env = new MockActivityEnvironment();
  const warnings: string[] = [];
  const log = env.context.log;
  log.warn = (message: string) => void warnings.push(message);
  const input: GetToolCatalogInput = { sessionId: 's', namespace: { tenant: 't', user: 'u' }, ...(allow ? { allow } : {}) };
  const catalog = (await env.run(activities.getToolCatalog, input)) as ToolCatalog;
  return { catalog, warnings };
}

describe('the tools a session is offered', () => {
  it('are at most 128 (OpenAI refuses a request with more), the first in catalog order, and the worker says which were left out', async () => {
    const { catalog, warnings } = await offered(catalogOf(140));
    expect(catalog.tools).toHaveLength(MAX_OFFERED_TOOLS);
    expect(catalog.tools.at(-1)?.name).toBe('local_t127');
    expect(warnings).toEqual([expect.stringMatching(/^12 tool\(s\) are not offered: a model call takes at most 128 tools .*\(left out: local_t128, local_t129, .* and 2 more\); narrow them/)]);
  });

  it("are counted after the session's allow-list, which can pick any 128 of them", async () => {
    const activities = catalogOf(140);
    const { catalog, warnings } = await offered(activities, ['local_t139', 'local_t000']);
    expect(catalog.tools.map((t) => t.name).sort()).toEqual(['local_t000', 'local_t139']);
    expect(warnings).toEqual([]);
  });

  it('take at most 384 KB of definitions, so the catalog recorded in history and sent with every call stays within one payload', async () => {
    const { catalog, warnings } = await offered(catalogOf(40, 30_000));
    expect(Buffer.byteLength(JSON.stringify(catalog.tools))).toBeLessThanOrEqual(MAX_OFFERED_TOOL_BYTES);
    expect(catalog.tools.length).toBe(13);
    expect(warnings).toEqual([expect.stringMatching(/^27 tool\(s\) are not offered/)]);
  });
});
