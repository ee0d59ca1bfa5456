import { PROMPT_PARTS_COLLECTION, PromptPartStore } from '../../activities/prompt-part-store';
import { useMonitoredDb } from '../support/monitored-db';

/*
 * Archived sessions' prompt parts, deleted on the real MongoDB-compatible
 * server: deletions close together share one command (FerretDB reads the
 * whole collection for each), and a run started after the archive keeps its
 * parts.
 */

const m = useMonitoredDb('parts', ['delete']);

/** Stores one message part for a run, as a model call sending it inline would. */
async function storePart(store: PromptPartStore, workflowId: string, runId: string, text: string): Promise<void> {
  const resolved = await store.resolve({ workflowId, runId }, { messages: ['p1'], tools: [], parts: { p1: { role: 'user', content: text } } });
  await resolved.stored;
}

const stored = async (workflowId: string) => (await m.db.collection<{ runId: string }>(PROMPT_PARTS_COLLECTION).find({ workflowId }).toArray()).map((d) => d.runId).sort();

it('sessions archived close together have their parts deleted by one command; other sessions keep theirs', async () => {
  const store = new PromptPartStore(m.db);
  for (const wf of ['wf-a', 'wf-b', 'wf-c']) {
    await storePart(store, wf, `${wf}-run1`, 'hello');
    await storePart(store, wf, `${wf}-run2`, 'again');
  }
  const before = m.commands.length;
  const a = store.deleteSession('wf-a');
  const b = store.deleteSession('wf-b');
  // Not at once: the deletion waits for others to share it.
  expect(m.commands.length).toBe(before);
  await Promise.all([a, b]);
  expect(m.commands.length - before).toBe(1);
  expect(await stored('wf-a')).toEqual([]);
  expect(await stored('wf-b')).toEqual([]);
  expect(await stored('wf-c')).toEqual(['wf-c-run1', 'wf-c-run2']);
});

it('a run the session started after it was archived keeps its parts', async () => {
  const store = new PromptPartStore(m.db);
  await storePart(store, 'wf-d', 'wf-d-run1', 'before the archive');
  const deleted = store.deleteSession('wf-d');
  await new Promise((resolve) => setTimeout(resolve, 5));
  // The session comes back at once (a message right after its end): a new run, the same workflow id.
  await storePart(store, 'wf-d', 'wf-d-run2', 'after the archive');
  await deleted;
  expect(await stored('wf-d')).toEqual(['wf-d-run2']);
});

it('settled() starts the queued deletions at once, after the parts still queued for writing', async () => {
  const store = new PromptPartStore(m.db, undefined, { delayMs: 60_000, maxDocs: 200, attempts: 3 });
  const resolved = await store.resolve({ workflowId: 'wf-e', runId: 'wf-e-run1' }, { messages: ['p1'], tools: [], parts: { p1: { role: 'user', content: 'queued' } } });
  // Still queued (a minute's delay); the deletion must not run before it lands, or the part would stay.
  const deleted = store.deleteSession('wf-e');
  const started = performance.now();
  await store.settled();
  await Promise.all([resolved.stored, deleted]);
  expect(performance.now() - started).toBeLessThan(5_000);
  expect(await stored('wf-e')).toEqual([]);
});
