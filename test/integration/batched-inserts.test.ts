import { BatchedInserts, type BatchedInsertOptions } from '../../activities/batched-inserts';
import { useMonitoredDb } from '../support/monitored-db';

/*
 * Writes behind model calls (usage records), a batch at a time,
 * on the real MongoDB-compatible server: what arrives within the delay shares
 * one insert, and nothing is lost or written twice.
 */

type Doc = { _id: string; n: number };

const m = useMonitoredDb('batched', ['insert']);

let collections = 0;
function fresh(options: Partial<BatchedInsertOptions> = {}) {
  const name = `c${++collections}`;
  const batcher = new BatchedInserts<Doc>(() => m.db.collection<Doc>(name), { delayMs: 50, maxDocs: 200, attempts: 3, ...options });
  const insertsHere = () => m.commands.filter((e) => e.command.insert === name);
  const stored = async () => (await m.db.collection<Doc>(name).find().sort({ _id: 1 }).toArray()).map((d) => d._id);
  return { name, batcher, insertsHere, stored };
}

const docs = (...ids: string[]): Doc[] => ids.map((id, n) => ({ _id: id, n }));

it('documents added within the delay share one insert, and each add resolves once its documents are stored', async () => {
  const { batcher, insertsHere, stored } = fresh();
  const written = [batcher.add(docs('a', 'b')), batcher.add(docs('c')), batcher.add(docs('d'))];
  expect(batcher.queued).toBe(4);
  expect(insertsHere()).toHaveLength(0);
  await Promise.all(written);
  expect(insertsHere()).toHaveLength(1);
  expect((insertsHere()[0]!.command.documents as Doc[]).map((d) => d._id)).toEqual(['a', 'b', 'c', 'd']);
  expect(await stored()).toEqual(['a', 'b', 'c', 'd']);

  // A later add opens a new batch.
  await batcher.add(docs('e'));
  expect(insertsHere()).toHaveLength(2);
  expect(await stored()).toEqual(['a', 'b', 'c', 'd', 'e']);
});

it('the delay runs from the first document of a batch: a later add joins it without pushing the write back', async () => {
  const timed = fresh({ delayMs: 400 });
  const started = performance.now();
  const first = timed.batcher.add(docs('x')).then(() => performance.now() - started);
  await new Promise((resolve) => setTimeout(resolve, 200));
  const second = timed.batcher.add(docs('y'));
  // The insert is sent 400 ms in; had the second add restarted the wait, it would be sent 600 ms in. Checked by when
  // it was sent, not when it landed: a first insert into a new collection can take FerretDB a few hundred ms.
  await new Promise((resolve) => setTimeout(resolve, 300));
  expect(timed.insertsHere()).toHaveLength(1);
  const [a] = await Promise.all([first, second]);
  expect(a).toBeGreaterThanOrEqual(395);
  expect(timed.insertsHere()).toHaveLength(1);
  expect(await timed.stored()).toEqual(['x', 'y']);

  const single = fresh({ delayMs: 0 });
  await Promise.all([single.batcher.add(docs('a')), single.batcher.add(docs('b'))]);
  expect(single.insertsHere()).toHaveLength(2);
  expect(await single.stored()).toEqual(['a', 'b']);
});

it('a full batch is written at once, without waiting for the delay', async () => {
  const { batcher, insertsHere, stored } = fresh({ delayMs: 60_000, maxDocs: 3 });
  const first = batcher.add(docs('a', 'b'));
  const second = batcher.add(docs('c'));
  await Promise.all([first, second]);
  expect(insertsHere()).toHaveLength(1);
  expect(await stored()).toEqual(['a', 'b', 'c']);
  // Below the limit again: it waits, until settled() writes it.
  const third = batcher.add(docs('d'));
  await new Promise((resolve) => setTimeout(resolve, 100));
  expect(batcher.queued).toBe(1);
  expect(insertsHere()).toHaveLength(1);
  await batcher.settled();
  await third;
  expect(insertsHere()).toHaveLength(2);
  expect(await stored()).toEqual(['a', 'b', 'c', 'd']);
});

it('an id already stored counts as written: the rest of the batch lands and the stored document is left as it was', async () => {
  const { name, batcher, stored } = fresh();
  await m.db.collection<Doc>(name).insertOne({ _id: 'b', n: 99 });
  await expect(batcher.add(docs('a', 'b', 'c'))).resolves.toBeUndefined();
  expect(await stored()).toEqual(['a', 'b', 'c']);
  expect(await m.db.collection<Doc>(name).findOne({ _id: 'b' })).toEqual({ _id: 'b', n: 99 });
  // The same documents again (a retried activity): nothing changes, nothing fails.
  await expect(batcher.add(docs('a', 'c'))).resolves.toBeUndefined();
  expect(await m.db.collection(name).countDocuments()).toBe(3);
});

it('a document the server refuses is tried `attempts` times and fails its own add; the rest of its batch is written and resolves', async () => {
  let tries = 0;
  const name = `c${++collections}`;
  const batcher = new BatchedInserts<Doc>(
    () => {
      tries += 1;
      return m.db.collection<Doc>(name);
    },
    { delayMs: 10, maxDocs: 200, attempts: 2 },
  );
  await m.db.collection<Doc>(name).insertOne({ _id: 'there', n: 0 });
  // A field name starting with `$` is refused per document by the server; the batch is unordered.
  const bad = { _id: 'bad', n: 1, $oops: 1 } as unknown as Doc;
  const before = batcher.add(docs('good-1'));
  const refused = batcher.add([bad]);
  const duplicate = batcher.add(docs('there'));
  const after = batcher.add(docs('good-2'));
  await expect(refused).rejects.toThrow();
  await expect(before).resolves.toBeUndefined();
  await expect(duplicate).resolves.toBeUndefined();
  await expect(after).resolves.toBeUndefined();
  // Tried twice: the second time with the refused document alone.
  expect(tries).toBe(2);
  // After the test's own insert of `there`.
  const retried = m.commands.filter((e) => e.command.insert === name).slice(1);
  expect(retried.map((e) => (e.command.documents as Doc[]).map((d) => d._id))).toEqual([['good-1', 'bad', 'there', 'good-2'], ['bad']]);
  expect((await m.db.collection<Doc>(name).find().sort({ _id: 1 }).toArray()).map((d) => d._id)).toEqual(['good-1', 'good-2', 'there']);
  // The batcher carries on with the next batch.
  await batcher.add(docs('later'));
  expect(await m.db.collection<Doc>(name).findOne({ _id: 'later' })).toMatchObject({ _id: 'later' });
});

it('a document over the 16 MiB a document may hold is refused at once, alone, without sinking the batch it would have joined', async () => {
  const { batcher, insertsHere, stored } = fresh();
  const small = batcher.add(docs('small'));
  const huge = { _id: 'huge', n: 1, body: 'x'.repeat(17 * 1024 * 1024) } as Doc;
  await expect(batcher.add([huge])).rejects.toThrow('document huge is over the 16777216 bytes a MongoDB document may hold');
  await expect(small).resolves.toBeUndefined();
  expect(insertsHere()).toHaveLength(1);
  expect(await stored()).toEqual(['small']);
});

it('settled() writes what is queued now and resolves once every write has landed', async () => {
  const { batcher, insertsHere, stored } = fresh({ delayMs: 60_000 });
  void batcher.add(docs('a'));
  void batcher.add(docs('b'));
  await batcher.settled();
  expect(batcher.queued).toBe(0);
  expect(insertsHere()).toHaveLength(1);
  expect(await stored()).toEqual(['a', 'b']);
  // Nothing queued: settles at once.
  await batcher.settled();
});

it('refuses options that would never write', () => {
  const collection = () => m.db.collection<Doc>('never');
  expect(() => new BatchedInserts<Doc>(collection, { delayMs: -1, maxDocs: 1, attempts: 1 })).toThrow('delayMs must be a whole number of milliseconds from 0, got -1');
  expect(() => new BatchedInserts<Doc>(collection, { delayMs: 0, maxDocs: 0, attempts: 1 })).toThrow('maxDocs must be a whole number from 1, got 0');
  expect(() => new BatchedInserts<Doc>(collection, { delayMs: 0, maxDocs: 1, attempts: 0.5 })).toThrow('attempts must be a whole number from 1, got 0.5');
});
