import { LegacyPromptParts, PROMPT_PARTS_COLLECTION } from '../../activities/legacy-prompt-parts';
import { useMonitoredDb } from '../support/monitored-db';

/*
 * The prompt parts earlier versions stored in MongoDB, on the real
 * MongoDB-compatible server: deleted once old enough (this version stores
 * none; test/integration/prompt-by-ref.test.ts checks that a session's steps
 * leave none there).
 */

const m = useMonitoredDb('parts', ['delete']);

/** A part as a worker of an earlier version stored it. */
async function storeLegacyPart(workflowId: string, runId: string, text: string, createdAt = new Date()): Promise<void> {
  await m.db.collection(PROMPT_PARTS_COLLECTION).insertOne({ _id: `${runId}/p1` as never, workflowId, runId, body: JSON.stringify({ role: 'user', content: text }), createdAt });
}

const stored = async (workflowId: string) => (await m.db.collection<{ runId: string }>(PROMPT_PARTS_COLLECTION).find({ workflowId }).toArray()).map((d) => d.runId).sort();

describe('prompt parts stored by earlier versions', () => {
  it('are deleted once older than the given time, whatever their session; newer ones are kept', async () => {
    const store = new LegacyPromptParts(m.db);
    const hour = 60 * 60 * 1000;
    await storeLegacyPart('wf-a', 'wf-a-run1', 'two days old', new Date(Date.now() - 48 * hour));
    await storeLegacyPart('wf-b', 'wf-b-run1', 'a day and an hour old', new Date(Date.now() - 25 * hour));
    await storeLegacyPart('wf-c', 'wf-c-run1', 'an hour old', new Date(Date.now() - hour));
    expect(await store.deleteStoredBefore(new Date(Date.now() - 24 * hour))).toBe(2);
    expect(await stored('wf-a')).toEqual([]);
    expect(await stored('wf-b')).toEqual([]);
    expect(await stored('wf-c')).toEqual(['wf-c-run1']);
    expect(await store.deleteStoredBefore(new Date(Date.now() - 24 * hour))).toBe(0);
  });
});
