import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { ChatMessage } from '../workflows/chat-message';
import { PROMPT_PART_MISSING, contentTag, promptDigest, type PromptByRef } from '../workflows/prompt-parts';
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
  /** Part texts by run, then by id: a run's ids are short, so a lookup hashes little. */
  private readonly runs = new Map<string, Map<string, Part>>();
  /** Every held part, least recently used first (keyed by the part itself, which hashes by identity). */
  private readonly recency = new Set<Part>();
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
   * the whole prompt inline: one extra attempt. So does a prompt rebuilt
   * from held or read parts whose digest is not the one the workflow sent
   * (an id that stood for another text when the history was written), after
   * one more look at the history if memory supplied any of it, so the model
   * is never sent a prompt the workflow did not build. Parts of a prompt that
   * failed the check are dropped from memory.
   */
  async resolve(owner: PartOwner, prompt: PromptByRef): Promise<{ messages: ChatMessage[]; tools: ModelToolDefinition[] }> {
    const inline = new Map<string, Part>();
    for (const [id, value] of Object.entries(prompt.parts ?? {})) {
      const body = JSON.stringify(value);
      if (body === undefined) continue;
      inline.set(id, this.remember(owner.runId, id, body));
    }
    const named = [...prompt.messages, ...prompt.tools];
    const wanted = [...new Set(named)].filter((id) => !inline.has(id));
    let { parts, held } = await this.gather(owner, wanted, inline, true);
    const partOf = (id: string): Part => (inline.get(id) ?? parts.get(id)) as Part;
    // Parts all inline are the prompt as the workflow built it; one rebuilt from held or read parts is checked.
    const matches = (): boolean => prompt.digest === undefined || wanted.length === 0 || promptDigest(named.map((id) => tagOf(partOf(id)))) === prompt.digest;
    if (!matches()) {
      // A held text may be older than the run's history (the session resent its prompt on another worker): read it again, newest first.
      this.evict(owner, wanted);
      if (held) ({ parts, held } = await this.gather(owner, wanted, inline, false));
      if (!matches()) {
        this.evict(owner, wanted);
        throw ApplicationFailure.nonRetryable(
          `The prompt this worker rebuilt from the parts it holds and the run's history is not the one the session built (digest ${prompt.digest}); the session sends the whole prompt again.`,
          PROMPT_PART_MISSING,
        );
      }
    }
    return {
      messages: prompt.messages.map((id) => this.valueOf(partOf(id)) as ChatMessage),
      tools: prompt.tools.map((id) => this.valueOf(partOf(id)) as ModelToolDefinition),
    };
  }

  /** Keeps parts sent ahead of a model call (`holdPromptParts`), as the call's own inline parts are kept. */
  hold(owner: PartOwner, parts: Record<string, unknown>): void {
    for (const [id, value] of Object.entries(parts)) {
      const body = JSON.stringify(value);
      if (body !== undefined) this.remember(owner.runId, id, body);
    }
  }

  /**
   * The parts `ids` names, from this worker's memory (when `fromMemory`) and
   * then the run's history; `held` says whether any came from memory. Every
   * part the history read brings goes to memory (the run's next steps will
   * name them too), except those the call carries inline.
   */
  private async gather(owner: PartOwner, ids: readonly string[], inline: ReadonlyMap<string, Part>, fromMemory: boolean): Promise<{ parts: Map<string, Part>; held: boolean }> {
    const parts = new Map<string, Part>();
    let missing: string[] = [];
    const held = fromMemory ? this.runs.get(owner.runId) : undefined;
    for (const id of ids) {
      const part = held === undefined ? undefined : this.recall(held, id);
      if (part === undefined) missing.push(id);
      else parts.set(id, part);
    }
    const anyHeld = parts.size > 0;
    if (missing.length > 0) {
      const read = await this.readInTime(owner, new Set(missing), missing.length);
      for (const [id, body] of read) {
        if (inline.has(id)) continue;
        const part = this.remember(owner.runId, id, body);
        if (missing.includes(id)) parts.set(id, part);
      }
      missing = missing.filter((id) => !parts.has(id));
    }
    if (missing.length > 0) {
      throw ApplicationFailure.nonRetryable(
        `The prompt names ${missing.length} part(s) that no earlier model call of this run carried (${missing.slice(0, 5).join(', ')}); the session sends the whole prompt again.`,
        PROMPT_PART_MISSING,
      );
    }
    return { parts, held: anyHeld };
  }

  private evict(owner: PartOwner, ids: readonly string[]): void {
    const held = this.runs.get(owner.runId);
    if (held === undefined) return;
    for (const id of ids) {
      const part = held.get(id);
      if (part !== undefined) this.drop(part);
    }
  }

  /** Lets go of a held part. */
  private drop(part: Part): void {
    const held = this.runs.get(part.runId);
    if (held?.get(part.id) !== part) return;
    held.delete(part.id);
    if (held.size === 0) this.runs.delete(part.runId);
    this.recency.delete(part);
    this.cachedBytes -= heldBytes(part);
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

  /** Keeps a part's text, most recently used; a text already held under the id is replaced (the workflow sent it anew). */
  private remember(runId: string, id: string, body: string): Part {
    let run = this.runs.get(runId);
    if (run === undefined) this.runs.set(runId, (run = new Map()));
    const held = run.get(id);
    if (held !== undefined) {
      this.recency.delete(held);
      this.cachedBytes -= heldBytes(held);
    }
    const part: Part = held?.body === body ? held : { runId, id, body };
    run.set(id, part);
    this.recency.add(part);
    this.cachedBytes += heldBytes(part);
    this.trim();
    return part;
  }

  /** Drops the least recently used parts until the cache is within its bytes. */
  private trim(): void {
    for (const oldest of this.recency) {
      if (this.cachedBytes <= this.cacheBytes) break;
      this.drop(oldest);
    }
  }

  /**
   * The part's value, parsed the first time a prompt needs it (a session's
   * prompt repeats most parts every step). The parsed copy counts against
   * the cache's bytes as much again as its text.
   */
  private valueOf(part: Part): unknown {
    if (part.value === undefined) {
      part.value = deepFreeze(JSON.parse(part.body));
      if (this.runs.get(part.runId)?.get(part.id) === part) {
        part.parsedBytes = part.body.length;
        this.cachedBytes += part.parsedBytes;
        this.trim();
      }
    }
    return part.value;
  }

  /** A part of the run whose held parts are `run`, now the most recently used. */
  private recall(run: ReadonlyMap<string, Part>, id: string): Part | undefined {
    const part = run.get(id);
    if (part !== undefined) {
      this.recency.delete(part);
      this.recency.add(part);
    }
    return part;
  }
}

/** A part's JSON text and, once asked for, its `contentTag` and its parsed value. */
interface Part {
  /** Where the cache holds it: ids are per run. */
  runId: string;
  id: string;
  body: string;
  tag?: string;
  /** Parsed once and frozen: every later step that names the part gets the same value, which no one may change. */
  value?: unknown;
  /** What the parsed value counts against the cache's bytes (0 until parsed). */
  parsedBytes?: number;
}

const heldBytes = (part: Part): number => part.body.length + (part.parsedBytes ?? 0);

/** Freezes a parsed part and everything in it. */
function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}

function tagOf(part: Part): string {
  part.tag ??= contentTag(part.body);
  return part.tag;
}

/** A failure's message, short, for the call's error (a history read's errors name the server, never credentials). */
function briefly(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return message.length > 200 ? `${message.slice(0, 200)}...` : message;
}
