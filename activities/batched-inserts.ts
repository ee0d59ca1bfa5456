import { BSON, type Collection, type Document, type MongoServerError, type OptionalUnlessRequiredId } from 'mongodb';

/**
 * Inserts written behind their callers, a batch at a time. Each insert costs
 * the worker and the database a round trip's CPU (about 0.8 ms each on
 * FerretDB, docs/performance.md), whatever it carries: documents that arrive
 * within `delayMs` of each other share one `insertMany` (unordered: one
 * document refused does not stop the others). Documents are keyed by `_id`,
 * so a batch tried again, or a document added twice (a retried activity),
 * writes nothing twice; a duplicate id counts as written. Only the documents
 * that failed otherwise are tried again, and only their callers see a
 * failure.
 */
export interface BatchedInsertOptions {
  /** How long the first document of a batch waits for others; 0 writes each add on its own. */
  delayMs: number;
  /** A batch holding this many documents is written at once. */
  maxDocs: number;
  /** Tries per document; one that failed for a reason other than a duplicate id is tried again 200 ms x try later. */
  attempts: number;
}

export const DEFAULT_BATCHED_INSERTS: BatchedInsertOptions = { delayMs: 150, maxDocs: 200, attempts: 3 };

/** The largest document the server stores (BSON's 16 MiB); the driver refuses a larger one before sending anything. */
export const MAX_DOCUMENT_BYTES = 16 * 1024 * 1024;

/** One caller's documents and what it waits on. */
interface Add<D> {
  docs: D[];
  resolve(): void;
  reject(err: unknown): void;
}

/** What a failed insert says per document: the indexes (into the documents sent) that failed for a reason other than a duplicate id; undefined when it says nothing per document. */
function failedIndexes(err: unknown): Set<number> | undefined {
  const writeErrors = (err as { writeErrors?: Array<{ index: number; code?: number }> | { index: number; code?: number } } | undefined)?.writeErrors;
  if (writeErrors === undefined) return (err as MongoServerError | undefined)?.code === 11000 ? new Set() : undefined;
  const list = Array.isArray(writeErrors) ? writeErrors : [writeErrors];
  if (list.length === 0) return undefined;
  // A duplicate id is a document already there: written (a retried activity, or a batch tried again).
  return new Set(list.filter((w) => w.code !== 11000).map((w) => w.index));
}

/**
 * Items that wait up to `delayMs` for others and are then handed to `write`
 * together; a batch whose items' sizes reach `maxSize` goes at once. The
 * queue behind the batched inserts here.
 */
class BatchQueue<T> {
  private open: T[] = [];
  private openSize = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly writing = new Set<Promise<void>>();

  /** `write` settles its items' callers itself; a rejection of it is ignored. */
  constructor(
    private readonly delayMs: number,
    private readonly maxSize: number,
    private readonly write: (items: T[]) => Promise<void>,
  ) {}

  add(item: T, size = 1): void {
    this.open.push(item);
    this.openSize += size;
    if (this.openSize >= this.maxSize || this.delayMs === 0) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), this.delayMs);
  }

  /** The summed size of the items queued and not yet being written. */
  get queued(): number {
    return this.openSize;
  }

  /** Starts writing the open batch now. */
  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const items = this.open;
    this.open = [];
    this.openSize = 0;
    if (items.length === 0) return;
    const work = this.write(items).catch(() => undefined);
    this.writing.add(work);
    void work.finally(() => this.writing.delete(work));
  }

  /** Writes what is queued and resolves once every write started is done (or failed). */
  async settled(): Promise<void> {
    this.flush();
    await Promise.allSettled([...this.writing]);
  }
}

export class BatchedInserts<D extends Document & { _id: string }> {
  private readonly queue: BatchQueue<Add<D>>;

  constructor(
    private readonly collection: () => Collection<D>,
    private readonly options: BatchedInsertOptions = DEFAULT_BATCHED_INSERTS,
  ) {
    if (!Number.isInteger(options.delayMs) || options.delayMs < 0) throw new Error(`delayMs must be a whole number of milliseconds from 0, got ${options.delayMs}`);
    if (!Number.isInteger(options.maxDocs) || options.maxDocs < 1) throw new Error(`maxDocs must be a whole number from 1, got ${options.maxDocs}`);
    if (!Number.isInteger(options.attempts) || options.attempts < 1) throw new Error(`attempts must be a whole number from 1, got ${options.attempts}`);
    this.queue = new BatchQueue(options.delayMs, options.maxDocs, (adds) => this.write(adds));
  }

  /**
   * Queues documents; resolves once they are in the collection, rejects once
   * one of them has failed every try (the others of the batch are written
   * regardless). A document over the server's size limit is refused here,
   * alone, so it cannot sink the batch it would have shared.
   */
  add(docs: D[]): Promise<void> {
    if (docs.length === 0) return Promise.resolve();
    const tooLarge = docs.find((doc) => BSON.calculateObjectSize(doc) > MAX_DOCUMENT_BYTES);
    if (tooLarge) return Promise.reject(new Error(`document ${tooLarge._id.slice(0, 120)} is over the ${MAX_DOCUMENT_BYTES} bytes a MongoDB document may hold`));
    let add!: Add<D>;
    const written = new Promise<void>((resolve, reject) => (add = { docs, resolve, reject }));
    // A caller that does not await its write must not see an unhandled rejection; one that does still gets it.
    written.catch(() => undefined);
    this.queue.add(add, docs.length);
    return written;
  }

  /** Documents queued and not yet being written. */
  get queued(): number {
    return this.queue.queued;
  }

  /** Writes what is queued and resolves once every write started on this worker is done (or failed). */
  settled(): Promise<void> {
    return this.queue.settled();
  }

  /** Never rejects: each add is settled on its own. */
  private async write(adds: Array<Add<D>>): Promise<void> {
    let pending = adds;
    for (let attempt = 1; pending.length > 0; attempt++) {
      const docs = pending.flatMap((a) => a.docs);
      let failed: Set<number> | undefined;
      let error: unknown;
      try {
        await this.collection().insertMany(docs as OptionalUnlessRequiredId<D>[], { ordered: false });
        failed = new Set();
      } catch (err) {
        error = err;
        failed = failedIndexes(err);
      }
      // Adds whose every document is written are done; the rest (all of them, when the error named no document) go again.
      const again: Array<Add<D>> = [];
      let first = 0;
      for (const add of pending) {
        const mine = add.docs.map((_, i) => first + i);
        first += add.docs.length;
        if (failed !== undefined && !mine.some((i) => failed.has(i))) add.resolve();
        else again.push(add);
      }
      if (again.length > 0 && attempt >= this.options.attempts) {
        for (const add of again) add.reject(error);
        return;
      }
      pending = again;
      if (pending.length > 0) await new Promise((resolve) => setTimeout(resolve, 200 * attempt));
    }
  }
}
