import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { ChatMessage } from '../workflows/chat-message';
import { PROMPT_PART_MISSING, contentTag, tagOfId, type PromptByRef } from '../workflows/prompt-parts';
import type { ModelToolDefinition } from './activity-types';
import { readRunPartsFromHistory, type PartOwner, type RunPartsReader } from './prompt-parts-in-history';

export type { PartOwner, RunPartsReader } from './prompt-parts-in-history';

const DEFAULT_CACHE_BYTES = 64 * 1024 * 1024;
/** A history read that takes longer fails the call as PromptPartMissing: sending the prompt whole is cheaper than waiting. */
const DEFAULT_READ_BUDGET_MS = 10_000;

/** The run's history, read through the activity's client (the worker's connection and data converter). */
const fromActivityHistory: RunPartsReader = (owner, wanted) => readRunPartsFromHistory(Context.current().client, owner, wanted);

export interface PromptPartResolverOptions {
  /** Bytes of part text kept in memory, least recently used out first (default 64 MB). */
  cacheBytes?: number;
  /** Reads a run's parts when this worker lacks one; the run's history by default (tests inject faults here). */
  readRun?: RunPartsReader;
  /** How long a read may take before the call fails as PromptPartMissing (default 10 s). */
  readBudgetMs?: number;
}

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
export class PromptPartResolver {
  private readonly cache = new Map<string, string>();
  private cachedBytes = 0;
  private readonly cacheBytes: number;
  private readonly readRun: RunPartsReader;
  private readonly readBudgetMs: number;

  constructor(options: PromptPartResolverOptions = {}) {
    this.cacheBytes = options.cacheBytes ?? DEFAULT_CACHE_BYTES;
    this.readRun = options.readRun ?? fromActivityHistory;
    this.readBudgetMs = options.readBudgetMs ?? DEFAULT_READ_BUDGET_MS;
  }

  /**
   * The prompt the workflow meant: its messages and tools rebuilt from the
   * inline parts and the ones this worker holds or reads from the run's
   * history. A part still not found (an input naming an id no call of the
   * run carried, a history that could not be read in time) fails the call
   * with `PromptPartMissing` (not retryable), which makes the workflow send
   * the whole prompt inline: one extra attempt. A part read from history
   * whose text does not match its id's content tag counts as not found, so
   * an id never brings back another text than the one it was made for.
   */
  async resolve(owner: PartOwner, prompt: PromptByRef): Promise<{ messages: ChatMessage[]; tools: ModelToolDefinition[] }> {
    const key = (id: string) => `${owner.runId}/${id}`;
    const bodies = new Map<string, string>();
    for (const [id, value] of Object.entries(prompt.parts ?? {})) {
      const body = JSON.stringify(value);
      if (body === undefined) continue;
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
      const read = await this.readInTime(owner, new Set(missing), missing.length);
      // Every part read goes to the cache (the run's next steps will name them too), unless its text is not the one its id stands for.
      for (const [id, body] of read) {
        if (!matchesTag(id, body)) continue;
        if (!bodies.has(id)) this.remember(key(id), body);
        if (missing.includes(id)) bodies.set(id, body);
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

  /** The run's parts as the reader finds them, or PromptPartMissing when it fails or takes longer than the budget. */
  private async readInTime(owner: PartOwner, wanted: ReadonlySet<string>, count: number): Promise<Map<string, string>> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${this.readBudgetMs} ms`)), this.readBudgetMs);
    });
    const reading = this.readRun(owner, wanted);
    // A read given up on may still fail later: that is not an unhandled rejection.
    reading.catch(() => undefined);
    try {
      return await Promise.race([reading, late]);
    } catch (err) {
      throw ApplicationFailure.nonRetryable(
        `The prompt names ${count} part(s) this worker does not hold, and the run's history could not be read (${briefly(err)}); the session sends the whole prompt again.`,
        PROMPT_PART_MISSING,
      );
    } finally {
      clearTimeout(timer);
    }
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

/** Whether a part's text is the one its id was made for (ids from before content tags match any text). */
function matchesTag(id: string, body: string): boolean {
  const tag = tagOfId(id);
  return tag === undefined || tag === contentTag(body);
}

/** A failure's message, short, for the call's error (a history read's errors name the server, never credentials). */
function briefly(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return message.length > 200 ? `${message.slice(0, 200)}...` : message;
}
