import { z } from 'zod';
import type { Embedder, RecallThresholds } from '../memory/embedder';
import { offlineTokens } from '../memory/embedder';
import type { MemoryRepository, ScopedMemories } from '../memory/memory-repository';
import type { MemoryDoc } from '../memory/memory-types';
import { cosine } from '../memory/recall';
import { defineTool, type NativeTool, type ToolRunContext } from './native-tool';
import { ToolInputError, ToolPermanentError } from './tool-errors';

export interface ForgetMemoryDeps {
  repo: MemoryRepository;
  embedder: Embedder;
  /** The recall thresholds for a description (an embedder of two models has one pair per model; embedder.ts `thresholdsFor`). */
  thresholds: (query: string) => RecallThresholds;
  clock?: () => Date;
}

/** One confirmation deletes at most this many memories, so the person approving can read them all. */
const MAX_DELETE = 3;

const MemoryRef = z
  .string()
  .trim()
  .regex(/^(?:\[?mem[:_])?[0-9a-f]{4,24}\]?$/i, 'a memory id such as "mem:ab12" or "mem_ab12cd34ef56ab12cd34ef56"');

function hexOf(ref: string): string {
  return ref.toLowerCase().replace(/^\[?mem[:_]/, '').replace(/\]$/, '');
}

function brief(doc: MemoryDoc) {
  return { id: doc._id, kind: doc.kind, text: doc.text };
}

async function byId(scope: ScopedMemories, ref: string): Promise<MemoryDoc[]> {
  const hex = hexOf(ref);
  if (hex.length === 24) {
    const doc = await scope.get(`mem_${hex}`);
    return doc && doc.status === 'active' ? [doc] : [];
  }
  // Looked up by prefix in the database: among the 500 newest only, a memory recalled this turn in a larger
  // namespace was "not found".
  return (await scope.list({ idPrefix: hex, limit: 10 })).memories;
}

/** The memory `ref` names if its last change is a deletion by `actor` (this call, on an earlier attempt). */
async function deletedBy(scope: ScopedMemories, ref: string, actor: { sessionId: string; turnId?: string; toolCallId: string }): Promise<MemoryDoc | undefined> {
  const hex = hexOf(ref);
  const candidates =
    hex.length === 24
      ? [await scope.get(`mem_${hex}`)].filter((d): d is MemoryDoc => d !== null && d.status === 'deleted')
      : (await scope.list({ statuses: ['deleted'], idPrefix: hex, limit: 10 })).memories;
  if (candidates.length !== 1) return undefined;
  const doc = candidates[0]!;
  const last = (await scope.auditTrail(doc._id)).at(-1);
  const same = last?.action === 'delete' && last.actor.sessionId === actor.sessionId && last.actor.turnId === actor.turnId && last.actor.toolCallId === actor.toolCallId;
  return same ? doc : undefined;
}

async function byDescription(scope: ScopedMemories, deps: ForgetMemoryDeps, description: string, signal: AbortSignal) {
  // Every live memory, as recall reads them: the 500 newest alone missed older ones in a larger namespace.
  const { memories } = await scope.loadActive((deps.clock ?? (() => new Date()))());
  if (memories.length === 0) return { sure: [], possible: [] };
  const [vector] = await deps.embedder.embed([description], { signal });
  const query = Float32Array.from(vector ?? []);
  const wanted = offlineTokens(description);
  const { weak } = deps.thresholds(description);
  const scored = memories.map((m) => {
    const words = new Set(offlineTokens(`${m.text} ${m.kind === 'fact' ? `${m.predicate} ${m.value}` : m.statement}`));
    // A clear match has every content word of the description as a distinct
    // word: "CityZq0x" never matches "CityZq3x", however close their vectors.
    const sure = wanted.length > 0 && wanted.every((w) => words.has(w));
    const similarity = m.embedderId === deps.embedder.id ? cosine(query, m.embedding) : 0;
    return { m, similarity, sure, possible: similarity >= weak && similarity !== 0 };
  });
  scored.sort((a, b) => b.similarity - a.similarity);
  return { sure: scored.filter((s) => s.sure).map((s) => s.m), possible: scored.filter((s) => !s.sure && s.possible).map((s) => s.m) };
}

/**
 * `find_memories`: the read-only half of forgetting by description. It
 * resolves the user's words to concrete memories (ids and texts), which the
 * model passes to `forget_memory`, so the confirmation shows exactly what
 * will be deleted.
 */
export function findMemoriesTool(deps: ForgetMemoryDeps): NativeTool {
  const tool = defineTool({
    name: 'find_memories',
    description:
      'Finds things you remember about the user across sessions that match a description, e.g. "that I am vegetarian", ' +
      'and returns each with its id and text. Use it before local_forget_memory when the user asks to forget something ' +
      'and you do not know the memory id; then pass the ids and texts of the memories the user means to local_forget_memory.',
    parameters: z.object({
      description: z.string().trim().min(2).max(300).describe('What to look for, in the user\'s words, e.g. "my home address".'),
    }),
    risk: 'read',
    async execute(args, ctx: ToolRunContext) {
      const scope = deps.repo.forNamespace(ctx.namespace);
      const found = await byDescription(scope, deps, args.description, ctx.signal);
      return {
        matches: found.sure.slice(0, 10).map(brief),
        ...(found.possible.length > 0 ? { possibleMatches: found.possible.slice(0, 5).map(brief) } : {}),
        ...(found.sure.length === 0 && found.possible.length === 0 ? { message: 'Nothing matched.' } : {}),
      };
    },
  });
  return tool as unknown as NativeTool;
}

const MemoryToForget = z.object({
  id: MemoryRef.describe('The memory\'s id, e.g. "mem:ab12" or the full id from local_find_memories.'),
  text: z.string().trim().min(1).max(400).describe('The memory\'s text exactly as you were given it; the user sees it when confirming.'),
});

const sameText = (a: string, b: string) => a.replace(/\s+/g, ' ').trim() === b.replace(/\s+/g, ' ').trim();

/**
 * `forget_memory`: deletes exactly the memories named by id, within the
 * session's namespace only. Destructive, so the user confirms every call; the
 * call carries each memory's text, and a text that is not the memory's own
 * deletes nothing, so what the user approves is what goes.
 */
export function forgetMemoryTool(deps: ForgetMemoryDeps): NativeTool {
  const tool = defineTool({
    name: 'forget_memory',
    description:
      'Deletes things you remember about the user across sessions (facts, preferences, plans). Use it only when the user ' +
      'asks you to forget something or says a remembered item is wrong and should go; the user confirms before it runs. ' +
      'Pass each memory to delete with its id and its text exactly as you were given them (the id you cite, e.g. ' +
      '"mem:ab12", or one from local_find_memories); at most 3. If you do not know the id, call local_find_memories ' +
      'first. Do not use it to correct a fact: the new value replaces the old one on its own.',
    parameters: z.object({
      memories: z.array(MemoryToForget).min(1).max(MAX_DELETE).describe('The memories to delete, each with its id and text.'),
      reason: z.string().max(300).optional().describe('Why, if the user said.'),
    }),
    risk: 'destructive',
    idempotent: true,
    async execute(args, ctx: ToolRunContext) {
      const scope = deps.repo.forNamespace(ctx.namespace);
      const actor = { by: 'tool' as const, sessionId: ctx.sessionId, ...(ctx.turnId ? { turnId: ctx.turnId } : {}), toolCallId: ctx.toolCallId ?? ctx.idempotencyKey };
      // Every named memory is checked before any is deleted: all or nothing.
      const targets: MemoryDoc[] = [];
      // Deleted by this same call already: an attempt that deleted some and then timed out or died, run again.
      const done: MemoryDoc[] = [];
      for (const wanted of args.memories) {
        const found = await byId(scope, wanted.id);
        if (found.length === 0) {
          const mine = await deletedBy(scope, wanted.id, actor);
          if (mine && sameText(mine.text, wanted.text)) {
            if (!done.some((d) => d._id === mine._id)) done.push(mine);
            continue;
          }
          throw new ToolPermanentError(`no active memory ${wanted.id} exists for this user`);
        }
        if (found.length > 1) throw new ToolInputError(`memory id ${wanted.id} is ambiguous; use one of: ${found.map((t) => t._id).join(', ')}`);
        const doc = found[0] as MemoryDoc;
        if (!sameText(doc.text, wanted.text)) {
          throw new ToolInputError(`memory ${wanted.id} reads "${doc.text}", not "${wanted.text}"; nothing was deleted. Pass the memory's own text, as local_find_memories returns it`);
        }
        if (!targets.some((t) => t._id === doc._id)) targets.push(doc);
      }
      const now = (deps.clock ?? (() => new Date()))();
      const reason = args.reason ?? `forget_memory: ${targets.map((t) => t._id).join(', ')}`;
      const deleted: ReturnType<typeof brief>[] = done.map(brief);
      for (const target of targets) {
        const before = await scope.delete(target._id, reason, { actor, now });
        if (before) deleted.push(brief(before));
      }
      return { deleted, count: deleted.length };
    },
  });
  return tool as unknown as NativeTool;
}
