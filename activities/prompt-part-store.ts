import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { Db } from 'mongodb';
import type { ChatMessage } from '../workflows/chat-message';
import { PROMPT_PART_MISSING, type PromptByRef } from '../workflows/prompt-parts';
import type { ModelToolDefinition } from './activity-types';
import { readRunPartsFromHistory, type PartOwner, type RunPartsReader } from './prompt-parts-in-history';

export type { PartOwner, RunPartsReader } from './prompt-parts-in-history';

/** Where workers of earlier versions stored parts; this version only deletes them (the maintenance sweep). */
export const PROMPT_PARTS_COLLECTION = 'prompt_parts';

interface PartDoc {
  /** `<runId>/<part id>`: part ids are per run. */
  _id: string;
  workflowId: string;
  runId: string;
  /** The part's JSON text. */
  body: string;
  createdAt: Date;
}

const DEFAULT_CACHE_BYTES = 64 * 1024 * 1024;
/** The run's history, read through the activity's client (the worker's connection and data converter). */
const fromActivityHistory: RunPartsReader = (owner, wanted) => readRunPartsFromHistory(Context.current().client, owner, wanted);

/**
 * The model activity's side of prompts by reference. Parts a call carries
 * are kept in this worker's memory: most steps of a session run on the
 * worker that ran the last one (eager dispatch, sticky workflow). A call
 * naming a part this worker does not hold (another worker ran the step that
 * sent it, or this one restarted) reads the run's history backwards until it
 * has found it: every part was inline in the call that first sent it.
 * Nothing is written anywhere: a step costs no database write for its
 * prompt.
 */
export class PromptPartStore {
  private readonly cache = new Map<string, string>();
  private cachedBytes = 0;

  constructor(
    private readonly db: Db,
    private readonly cacheBytes = DEFAULT_CACHE_BYTES,
    /** Reads a run's parts when this worker lacks one; the run's history by default. */
    private readonly readRun: RunPartsReader = fromActivityHistory,
  ) {}

  private get collection() {
    return this.db.collection<PartDoc>(PROMPT_PARTS_COLLECTION);
  }

  /**
   * The prompt the workflow meant: its messages and tools rebuilt from the
   * inline parts and the ones this worker holds or reads from the run's
   * history. A part still not found (an input naming an id no call of the
   * run carried, or a history that could not be read) fails the call with
   * `PromptPartMissing` (not retryable), which makes the workflow send the
   * whole prompt inline: one extra attempt, never a wrong prompt.
   */
  async resolve(owner: PartOwner, prompt: PromptByRef): Promise<{ messages: ChatMessage[]; tools: ModelToolDefinition[] }> {
    const key = (id: string) => `${owner.runId}/${id}`;
    const bodies = new Map<string, string>();
    for (const [id, value] of Object.entries(prompt.parts)) {
      const body = JSON.stringify(value);
      bodies.set(id, body);
      this.remember(key(id), body);
    }
    const wanted = [...new Set([...prompt.messages, ...prompt.tools])].filter((id) => !bodies.has(id));
    let missing: string[] = [];
    for (const id of wanted) {
      const body = this.recall(key(id));
      if (body === undefined) missing.push(id);
      else bodies.set(id, body);
    }
    if (missing.length > 0) {
      let read: Map<string, string>;
      try {
        read = await this.readRun(owner, new Set(missing));
      } catch (err) {
        throw ApplicationFailure.nonRetryable(
          `The prompt names ${missing.length} part(s) this worker does not hold, and the run's history could not be read (${briefly(err)}); the session sends the whole prompt again.`,
          PROMPT_PART_MISSING,
        );
      }
      // Every part read goes to the cache: the run's next steps will name them too.
      for (const [id, body] of read) if (!bodies.has(id)) this.remember(key(id), body);
      for (const id of missing) {
        const body = read.get(id);
        if (body !== undefined) bodies.set(id, body);
      }
      missing = missing.filter((id) => !bodies.has(id));
    }
    if (missing.length > 0) {
      throw ApplicationFailure.nonRetryable(
        `The prompt names ${missing.length} part(s) that no earlier model call of this run carried (${missing.slice(0, 5).join(', ')}); the session sends the whole prompt again.`,
        PROMPT_PART_MISSING,
      );
    }
    const parse = <T>(id: string): T => JSON.parse(bodies.get(id) as string) as T;
    return {
      messages: prompt.messages.map((id) => parse<ChatMessage>(id)),
      tools: prompt.tools.map((id) => parse<ModelToolDefinition>(id)),
    };
  }

  /**
   * Deletes the parts workers of earlier versions stored before `before`.
   * This version stores none and reads none from the database: those parts
   * serve only an earlier worker still running a session's run during an
   * upgrade, so the maintenance sweep deletes them once they are a day old.
   */
  async deleteStoredBefore(before: Date): Promise<number> {
    const { deletedCount } = await this.collection.deleteMany({ createdAt: { $lt: before } });
    return deletedCount;
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

/** A failure's message, short, for the call's error (a history read's errors name the server, never credentials). */
function briefly(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return message.length > 200 ? `${message.slice(0, 200)}...` : message;
}
