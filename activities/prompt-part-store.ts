import { ApplicationFailure } from '@temporalio/common';
import type { Db } from 'mongodb';
import type { ChatMessage } from '../workflows/chat-message';
import { PROMPT_PART_MISSING, type PromptByRef } from '../workflows/prompt-parts';
import type { ModelToolDefinition } from './activity-types';
import { BatchQueue, BatchedInserts, DEFAULT_BATCHED_INSERTS, type BatchedInsertOptions } from './batched-inserts';

export const PROMPT_PARTS_COLLECTION = 'prompt_parts';

interface PartDoc {
  /** `<runId>/<part id>`: part ids are per run. */
  _id: string;
  workflowId: string;
  runId: string;
  /** The part's JSON text, exactly as the workflow sent it (a string, so nothing in it is reshaped by the store). */
  body: string;
  createdAt: Date;
}

/** Where a call's parts belong: the run that sent them. */
export interface PartOwner {
  workflowId: string;
  runId: string;
}

const DEFAULT_CACHE_BYTES = 64 * 1024 * 1024;
const MISSING_PART_RETRY_MS = 100;
/** How long an archived session's part deletion waits for others', and how many share one. */
const DELETE_BATCH_MS = 250;
const DELETE_BATCH_MAX = 100;

/** An archived session whose parts are to go: those stored before it was archived. */
interface Deletion {
  workflowId: string;
  before: Date;
  resolve(): void;
  reject(err: unknown): void;
}

/**
 * The model activity's side of prompts by reference: parts a call carries
 * are kept in this worker's memory (most steps of a session run on the
 * worker that ran the last one) and in MongoDB (for any other worker, and
 * after a restart); ids are resolved from memory first.
 */
export class PromptPartStore {
  private readonly cache = new Map<string, string>();
  private cachedBytes = 0;

  /** New parts, written a batch at a time (several calls' parts in one insert). */
  private readonly inserts: BatchedInserts<PartDoc>;

  constructor(
    private readonly db: Db,
    private readonly cacheBytes = DEFAULT_CACHE_BYTES,
    batching: BatchedInsertOptions = DEFAULT_BATCHED_INSERTS,
  ) {
    this.inserts = new BatchedInserts(() => this.collection, batching);
  }

  /** Archived sessions whose parts are to be deleted, waiting to share one deletion. */
  private readonly deletions = new BatchQueue<Deletion>(DELETE_BATCH_MS, DELETE_BATCH_MAX, (batch) => this.deleteBatch(batch));

  /** Resolves once the writes and deletions still running on this worker are done (or failed), starting those queued now. */
  async settled(): Promise<void> {
    await Promise.allSettled([this.deletions.settled(), this.inserts.settled()]);
  }

  private get collection() {
    return this.db.collection<PartDoc>(PROMPT_PARTS_COLLECTION);
  }

  async ensureIndexes(): Promise<void> {
    await this.collection.createIndex({ workflowId: 1 });
  }

  /**
   * The prompt the workflow meant: its messages and tools rebuilt from the
   * inline parts and the stored ones. The inline parts are kept in memory at
   * once and written to MongoDB behind the call (`stored`, which the caller
   * need not await): a step's next call nearly always runs on this worker
   * (eager dispatch, sticky workflow), and a call that misses a part (another
   * worker, before the write landed or after a crash lost it) fails with
   * `PromptPartMissing`, which makes the workflow send the prompt whole. So a
   * lost write costs one retried step, never a wrong prompt.
   */
  async resolve(owner: PartOwner, prompt: PromptByRef): Promise<{ messages: ChatMessage[]; tools: ModelToolDefinition[]; stored: Promise<void> }> {
    const key = (id: string) => `${owner.runId}/${id}`;
    const bodies = new Map<string, string>();
    for (const [id, value] of Object.entries(prompt.parts)) {
      const body = JSON.stringify(value);
      bodies.set(id, body);
      this.remember(key(id), body);
    }
    const wanted = [...new Set([...prompt.messages, ...prompt.tools])].filter((id) => !bodies.has(id));
    const missing: string[] = [];
    for (const id of wanted) {
      const body = this.recall(key(id));
      if (body === undefined) missing.push(id);
      else bodies.set(id, body);
    }
    // Another worker's write may be a moment behind its call's completion: look twice more before giving up.
    for (let look = 0; look < 3 && missing.some((id) => !bodies.has(id)); look++) {
      if (look > 0) await new Promise((resolve) => setTimeout(resolve, MISSING_PART_RETRY_MS));
      const wantedNow = missing.filter((id) => !bodies.has(id));
      // One `_id` lookup per part: FerretDB answers only a filter on `_id` alone from its index (`$in` scans the collection).
      const found = (await Promise.all(wantedNow.map((id) => this.collection.findOne({ _id: key(id) }, { projection: { body: 1 } })))).filter((doc) => doc !== null);
      for (const doc of found) {
        const id = doc._id.slice(owner.runId.length + 1);
        bodies.set(id, doc.body);
        this.remember(doc._id, doc.body);
      }
    }
    const lost = missing.filter((id) => !bodies.has(id));
    if (lost.length > 0) {
      throw ApplicationFailure.nonRetryable(
        `The prompt names ${lost.length} part(s) this worker cannot find (${lost.slice(0, 5).join(', ')}); the session sends the whole prompt again.`,
        PROMPT_PART_MISSING,
      );
    }
    const parse = <T>(id: string): T => JSON.parse(bodies.get(id) as string) as T;
    return {
      messages: prompt.messages.map((id) => parse<ChatMessage>(id)),
      tools: prompt.tools.map((id) => parse<ModelToolDefinition>(id)),
      stored: this.save(owner, Object.keys(prompt.parts).map((id) => ({ id, body: bodies.get(id) as string }))),
    };
  }

  /**
   * Deletes the stored parts of a session (all its runs so far), when it is
   * archived. This worker's cache lets them age out: nothing reads a part of
   * a closed run. Deletions within DELETE_BATCH_MS of each other share one
   * `deleteMany`: FerretDB answers a filter on `workflowId` by reading the
   * whole collection (about 90 ms of its CPU with 1,500 parts stored), once
   * per command however many sessions it names. Parts stored after the call
   * (a run the session started again at once) are kept.
   */
  deleteSession(workflowId: string): Promise<void> {
    const done = new Promise<void>((resolve, reject) => this.deletions.add({ workflowId, before: new Date(), resolve, reject }));
    done.catch(() => undefined);
    return done;
  }

  private async deleteBatch(batch: Deletion[]): Promise<void> {
    try {
      // Parts still queued here would land after the deletion and stay.
      await this.inserts.settled();
      await this.collection.deleteMany({ $or: batch.map((d) => ({ workflowId: d.workflowId, createdAt: { $lte: d.before } })) });
      for (const d of batch) d.resolve();
    } catch (err) {
      for (const d of batch) d.reject(err);
    }
  }

  private async save(owner: PartOwner, parts: Array<{ id: string; body: string }>): Promise<void> {
    if (parts.length === 0) return;
    const createdAt = new Date();
    // A retried call stores the same parts again: those already there are the same text under the same id.
    await this.inserts.add(parts.map(({ id, body }) => ({ _id: `${owner.runId}/${id}`, workflowId: owner.workflowId, runId: owner.runId, body, createdAt })));
  }

  private remember(key: string, body: string): void {
    if (this.cache.has(key)) {
      this.cache.delete(key);
      this.cache.set(key, body);
      return;
    }
    this.cache.set(key, body);
    this.cachedBytes += body.length;
    for (const [oldest, text] of this.cache) {
      if (this.cachedBytes <= this.cacheBytes) break;
      this.cache.delete(oldest);
      this.cachedBytes -= text.length;
    }
  }

  private recall(key: string): string | undefined {
    const body = this.cache.get(key);
    if (body !== undefined) {
      this.cache.delete(key);
      this.cache.set(key, body);
    }
    return body;
  }
}
