import type { Collection, Document, MongoServerError, OptionalUnlessRequiredId } from 'mongodb';

/**
 * Inserts written behind their callers, a batch at a time. Each insert costs
 * the worker and the database a round trip's CPU (about 0.8 ms each on
 * FerretDB, docs/performance.md), whatever it carries: documents that arrive
 * within `delayMs` of each other share one `insertMany`. Documents are keyed
 * by `_id`, so a batch tried again, or a document added twice (a retried
 * activity), writes nothing twice; a duplicate id counts as written.
 */
export interface BatchedInsertOptions {
  /** How long the first document of a batch waits for others; 0 writes each add on its own. */
  delayMs: number;
  /** A batch holding this many documents is written at once. */
  maxDocs: number;
  /** Tries per batch; a failure other than a duplicate id is tried again 200 ms x try later. */
  attempts: number;
}

export const DEFAULT_BATCHED_INSERTS: BatchedInsertOptions = { delayMs: 50, maxDocs: 200, attempts: 3 };

/** True when every write error of a failed insert is a duplicate `_id`: what was to be written is there. */
export function onlyDuplicates(err: unknown): boolean {
  const e = err as (MongoServerError & { writeErrors?: Array<{ code?: number }> | { code?: number } }) | undefined;
  if (e?.code === 11000) return true;
  const errors = e?.writeErrors === undefined ? [] : Array.isArray(e.writeErrors) ? e.writeErrors : [e.writeErrors];
  return errors.length > 0 && errors.every((w) => w.code === 11000);
}

interface Batch<D> {
  docs: D[];
  written: Promise<void>;
  resolve(): void;
  reject(err: unknown): void;
}

function openBatch<D>(): Batch<D> {
  let resolve!: () => void;
  let reject!: (err: unknown) => void;
  const written = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  // A caller that does not await its write must not see an unhandled rejection; those that do still get it.
  written.catch(() => undefined);
  return { docs: [], written, resolve, reject };
}

export class BatchedInserts<D extends Document & { _id: string }> {
  private open: Batch<D> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly writing = new Set<Promise<void>>();

  constructor(
    private readonly collection: () => Collection<D>,
    private readonly options: BatchedInsertOptions = DEFAULT_BATCHED_INSERTS,
  ) {
    if (!Number.isInteger(options.delayMs) || options.delayMs < 0) throw new Error(`delayMs must be a whole number of milliseconds from 0, got ${options.delayMs}`);
    if (!Number.isInteger(options.maxDocs) || options.maxDocs < 1) throw new Error(`maxDocs must be a whole number from 1, got ${options.maxDocs}`);
    if (!Number.isInteger(options.attempts) || options.attempts < 1) throw new Error(`attempts must be a whole number from 1, got ${options.attempts}`);
  }

  /** Queues documents; resolves once they are in the collection, rejects once their batch has failed every try. */
  add(docs: D[]): Promise<void> {
    if (docs.length === 0) return Promise.resolve();
    const batch = (this.open ??= openBatch<D>());
    batch.docs.push(...docs);
    if (batch.docs.length >= this.options.maxDocs || this.options.delayMs === 0) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), this.options.delayMs);
    return batch.written;
  }

  /** Documents queued and not yet written. */
  get queued(): number {
    return this.open?.docs.length ?? 0;
  }

  /** Starts writing the open batch now. */
  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.open;
    this.open = undefined;
    if (!batch) return;
    const work = this.write(batch.docs).then(batch.resolve, batch.reject);
    this.writing.add(work);
    void work.finally(() => this.writing.delete(work));
  }

  /** Writes what is queued and resolves once every write started on this worker is done (or failed). */
  async settled(): Promise<void> {
    this.flush();
    await Promise.allSettled([...this.writing]);
  }

  private async write(docs: D[]): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.collection().insertMany(docs as OptionalUnlessRequiredId<D>[], { ordered: false });
        return;
      } catch (err) {
        // Tried again, the documents already written come back as duplicates: they are there.
        if (onlyDuplicates(err)) return;
        if (attempt >= this.options.attempts) throw err;
        await new Promise((resolve) => setTimeout(resolve, 200 * attempt));
      }
    }
  }
}
