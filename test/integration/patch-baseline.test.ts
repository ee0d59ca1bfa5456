import type { temporal } from '@temporalio/proto';
import { sessionOptions, startTestEnv, uniqueId, type TestEnv } from '../support/test-env';
import { workflowIdFor } from '../../workflows/messages';
import { PATCH_BASELINE } from '../../workflows/patches';
import { TURN_READS_IN_ONE } from '../../workflows/session-turn';
import type { agentSession } from '../../workflows/agent-session';

let env: TestEnv;
beforeAll(async () => {
  env = await startTestEnv({ name: 'patch-baseline' });
});
afterAll(async () => {
  await env?.close();
});

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;
const json = (data: Uint8Array | null | undefined): unknown => JSON.parse(Buffer.from(data ?? new Uint8Array()).toString('utf8'));

describe('the patch baseline (workflows/patches.ts)', () => {
  it("records one patch marker and one TemporalChangeVersion upsert for the baseline's patches, however many a new session consults, and one more of each for a patch added since", async () => {
    const sessionId = uniqueId('s');
    const options = sessionOptions(sessionId);
    env.model.script(
      [
        { respond: { kind: 'text', text: 'first' } },
        { respond: { kind: 'text', text: 'second' } },
      ],
      { lane: sessionId },
    );
    // Two turns and an end: the run consults the patches of its start, of each turn and of its archive.
    for (const text of ['one', 'two']) {
      const { turnId } = await env.agent.send(options, { text });
      expect(await env.agent.waitForTurn(sessionId, turnId)).toMatchObject({ outcome: 'completed' });
    }
    await env.agent.end(sessionId, 'test done');
    const handle = env.client.workflow.getHandle<typeof agentSession>(workflowIdFor(sessionId));
    expect(await handle.result()).toMatchObject({ status: 'archived', turns: 2 });

    const events: HistoryEvent[] = (await handle.fetchHistory()).events ?? [];
    const patchIds = events
      .filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_patch')
      .map((e) => (json(e.markerRecordedEventAttributes?.details?.['patch-data']?.payloads?.[0]?.data) as { id: string }).id);
    // The baseline's one marker, then the one patch added after it that every turn consults, once for the run.
    expect(patchIds).toEqual([PATCH_BASELINE, TURN_READS_IN_ONE]);
    const versions = events
      .map((e) => e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields?.TemporalChangeVersion)
      .filter((v) => v != null)
      .map((v) => json(v?.data));
    expect(versions).toEqual([[PATCH_BASELINE], [PATCH_BASELINE, TURN_READS_IN_ONE]]);
    env.model.assertDone(sessionId);
  });
});
