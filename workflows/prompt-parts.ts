import { inBaseline } from './patches';

/**
 * A model call's prompt, sent by reference.
 *
 * A step's prompt repeats almost all of the step before it: the system
 * message, the window, the turn so far and every tool schema. Written into
 * each `callModel` input, those copies were three quarters of a session's
 * history bytes. Instead, each distinct message or tool definition becomes a
 * part with a short id, written into history once (inline, the first time
 * it is sent) and named by id afterwards. The model activity keeps the
 * parts it is given in a worker-side cache, reads the run's history for any
 * it lacks, and rebuilds the full prompt from the ids before calling the
 * model.
 *
 * Deterministic: ids are assigned in the order the workflow first sends a
 * content, and a part counts as sent only once an activity that carried it
 * completed (its result is in history). A part the activity cannot find
 * comes back as `PromptPartMissing`; the workflow then sends the whole prompt
 * inline.
 */

/** What `callModel` receives instead of `messages` and `tools`. */
export interface PromptByRef {
  /** The prompt's messages, in order, by part id. */
  messages: string[];
  /** The offered tools, in order, by part id. */
  tools: string[];
  /** Parts this input carries, by id: the ones no completed call of the run carried. The JSON text of each is exactly what was sent. */
  parts: Record<string, unknown>;
  /**
   * A tag of the whole prompt (`promptDigest` over its parts' `contentTag`s,
   * messages then tools): the activity checks the prompt it rebuilt against
   * it. Absent in inputs from before it.
   */
  digest?: string;
}

/**
 * `Math.imul`, read once. In the workflow sandbox (a `vm` context) every read
 * of a global name goes through Node's interceptor on the context's global:
 * read in `contentTag`'s loop, it made a tag 25 to 60 times slower, and tagging
 * the prompt of a long session about 1 ms a step (docs/performance.md).
 */
const imul = Math.imul;

/**
 * A short digest of a JSON text (FNV-1a, 24 bits, hex). Replay does not
 * compare activity inputs, so a run replayed by code that builds a message
 * differently (a deploy without `patched()`, or a reset run, whose history is
 * a copy of the old run's prefix) gives the old text's id to the new text. A
 * worker that reads the old text from history under that id would send it;
 * the prompt's digest, built from its parts' tags, tells it that it did not
 * rebuild the prompt the workflow meant.
 */
export function contentTag(json: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < json.length; i++) {
    hash ^= json.charCodeAt(i);
    hash = imul(hash, 0x01000193);
  }
  return ((hash >>> 8) & 0xffffff).toString(16).padStart(6, '0');
}

/** The tag of a whole prompt, from its parts' tags in order (messages, then tools). */
export function promptDigest(partTags: readonly string[]): string {
  return contentTag(partTags.join(','));
}

/** Failure type of a `callModel` given an id whose part the activity cannot find (or a prompt rebuilt from parts that does not match its digest). */
export const PROMPT_PART_MISSING = 'PromptPartMissing';

/**
 * Patch id: model calls carry their prompt by reference (see above). Runs
 * that scheduled model calls with the whole prompt inline keep doing so.
 */
export const MODEL_PROMPT_BY_REF = inBaseline('model-prompt-by-ref');

/** Freezes an object and everything it holds (a message or a tool: plain data). */
function deepFreeze<T extends object>(value: T): T {
  Object.freeze(value);
  for (const inner of Object.values(value)) {
    if (typeof inner === 'object' && inner !== null) deepFreeze(inner);
  }
  return value;
}

/** Part ids and which of them a completed call carried, for one run (a new run starts with none). */
export class PromptLedger {
  private readonly ids = new Map<string, string>();
  /** Each id's `contentTag`, computed once, when the id is made. */
  private readonly tags = new Map<string, string>();
  private readonly stored = new Set<string>();
  /**
   * The id of each message or tool object already referred, by identity: a
   * window's messages are the same objects step after step, and reading
   * their id here spares turning each into JSON again. An object is frozen
   * (deeply) when it is first referred, so it cannot change under its id:
   * code that tried to change a message already sent would throw rather
   * than have the model sent its old text.
   */
  private readonly known = new WeakMap<object, string>();
  private next = 1;

  /** The prompt by reference, and the ids it carries inline (to confirm once the call completes). */
  compact(messages: readonly unknown[], tools: readonly unknown[]): { prompt: PromptByRef; inline: string[] } {
    const parts: Record<string, unknown> = {};
    const inline: string[] = [];
    const refer = (value: unknown): string => {
      const object = typeof value === 'object' && value !== null ? value : undefined;
      let id = object ? this.known.get(object) : undefined;
      if (id === undefined) {
        // Keyed by content, so an equal message or tool built anew (the system message of each turn, a re-offered
        // tool) is one part, and a message changed after it was first sent can never be mistaken for its old text.
        const json = JSON.stringify(value) ?? 'null';
        id = this.ids.get(json);
        if (id === undefined) {
          id = `p${this.next++}`;
          this.ids.set(json, id);
          this.tags.set(id, contentTag(json));
        }
        if (object) this.known.set(deepFreeze(object), id);
      }
      if (!this.stored.has(id) && !(id in parts)) {
        parts[id] = value;
        inline.push(id);
      }
      return id;
    };
    const messageIds = messages.map(refer);
    const toolIds = tools.map(refer);
    const digest = promptDigest([...messageIds, ...toolIds].map((id) => this.tags.get(id) ?? ''));
    return { prompt: { messages: messageIds, tools: toolIds, parts, digest }, inline };
  }

  /** A call that carried these parts completed: its input, in history, holds them. */
  confirm(ids: readonly string[]): void {
    for (const id of ids) this.stored.add(id);
  }

  /** The activity could not find a part: the next call sends everything inline again. */
  forget(): void {
    this.stored.clear();
  }
}
