import { ApplicationFailure } from '@temporalio/common';
import { PROMPT_PARTS_COLLECTION, PromptPartStore, type PartOwner, type RunPartsReader } from '../../activities/prompt-part-store';
import { PROMPT_PART_MISSING } from '../../workflows/prompt-parts';
import { useMonitoredDb } from '../support/monitored-db';

/*
 * The model activity's prompt parts on the real MongoDB-compatible server:
 * resolving a prompt writes and reads nothing there (parts a worker lacks
 * come from the run's history, through the reader given here), and the parts
 * earlier versions stored are deleted once old enough.
 */

const m = useMonitoredDb('parts', ['delete', 'insert', 'find']);

/** A part as a worker before parts were read from history stored it. */
async function storeLegacyPart(workflowId: string, runId: string, text: string, createdAt = new Date()): Promise<void> {
  await m.db.collection(PROMPT_PARTS_COLLECTION).insertOne({ _id: `${runId}/p1` as never, workflowId, runId, body: JSON.stringify({ role: 'user', content: text }), createdAt });
}

const stored = async (workflowId: string) => (await m.db.collection<{ runId: string }>(PROMPT_PARTS_COLLECTION).find({ workflowId }).toArray()).map((d) => d.runId).sort();

/** A reader standing in for the run's history: the parts given, and how often it was read. */
function historyOf(parts: Record<string, unknown>): { read: RunPartsReader; reads: PartOwner[]; wanted: string[][] } {
  const reads: PartOwner[] = [];
  const wanted: string[][] = [];
  return {
    reads,
    wanted,
    read: async (owner, ids) => {
      reads.push(owner);
      wanted.push([...ids].sort());
      return new Map(Object.entries(parts).map(([id, value]) => [id, JSON.stringify(value)]));
    },
  };
}

const run = { workflowId: 'wf-r', runId: 'wf-r-run1' };
const system = { role: 'system', content: 'You are helpful.' };
const tool = { name: 'local_calculate', description: 'adds', parameters: { type: 'object' } };
const user = { role: 'user', content: 'what is 6 times 7?' };

async function failureOf(promise: Promise<unknown>): Promise<ApplicationFailure> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApplicationFailure);
  return err as ApplicationFailure;
}

describe('resolving a prompt by reference', () => {
  it('uses the inline parts and this worker\'s memory, and touches neither the database nor the history', async () => {
    const history = historyOf({});
    const store = new PromptPartStore(m.db, undefined, history.read);
    const before = m.commands.length;
    const first = await store.resolve(run, { messages: ['p1', 'p2'], tools: ['p3'], parts: { p1: system, p2: user, p3: tool } });
    expect(first).toEqual({ messages: [system, user], tools: [tool] });
    const next = await store.resolve(run, { messages: ['p1', 'p2', 'p4'], tools: ['p3'], parts: { p4: { role: 'assistant', content: '42' } } });
    expect(next.messages).toEqual([system, user, { role: 'assistant', content: '42' }]);
    expect(next.tools).toEqual([tool]);
    expect(history.reads).toEqual([]);
    expect(m.commands.length).toBe(before);
  });

  it('reads the run\'s history for the parts this worker lacks, and keeps every part it read from then on', async () => {
    const history = historyOf({ p1: system, p2: user, p3: tool, p4: { role: 'assistant', content: 'earlier' } });
    const store = new PromptPartStore(m.db, undefined, history.read);
    const resolved = await store.resolve(run, { messages: ['p1', 'p2'], tools: ['p3'], parts: { p2: user } });
    expect(resolved).toEqual({ messages: [system, user], tools: [tool] });
    expect(history.reads).toEqual([run]);
    // Asked for what it lacked, not for what the input carried.
    expect(history.wanted).toEqual([['p1', 'p3']]);
    // p4 was not named by the first call, but came with the same read.
    const later = await store.resolve(run, { messages: ['p1', 'p4'], tools: [], parts: {} });
    expect(later.messages).toEqual([system, { role: 'assistant', content: 'earlier' }]);
    expect(history.reads).toHaveLength(1);
    // Ids are per run: another run's p1 is another part.
    const other = { workflowId: 'wf-r', runId: 'wf-r-run2' };
    await store.resolve(other, { messages: ['p1'], tools: [], parts: {} });
    expect(history.reads).toEqual([run, other]);
  });

  it('fails as PromptPartMissing, not retryable, naming the ids that no call of the run carried', async () => {
    const store = new PromptPartStore(m.db, undefined, historyOf({ p1: system }).read);
    const failure = await failureOf(store.resolve(run, { messages: ['p1', 'p7', 'p9'], tools: [], parts: {} }));
    expect(failure.type).toBe(PROMPT_PART_MISSING);
    expect(failure.nonRetryable).toBe(true);
    expect(failure.message).toContain('2 part(s) that no earlier model call of this run carried (p7, p9)');
  });

  it('fails as PromptPartMissing, not retryable, saying why, when the history cannot be read', async () => {
    const store = new PromptPartStore(m.db, undefined, async () => {
      throw new Error('14 UNAVAILABLE: history service unreachable');
    });
    const failure = await failureOf(store.resolve(run, { messages: ['p1'], tools: [], parts: {} }));
    expect(failure.type).toBe(PROMPT_PART_MISSING);
    expect(failure.nonRetryable).toBe(true);
    expect(failure.message).toContain("the run's history could not be read (14 UNAVAILABLE: history service unreachable)");
  });
});

describe('parts stored by earlier versions', () => {
  it('are deleted once older than the given time, whatever their session; newer ones are kept', async () => {
    const store = new PromptPartStore(m.db);
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
