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
  thresholds: RecallThresholds;
  clock?: () => Date;
}

/** Deleting by description stops at this many matches and asks for something more specific instead. */
const MAX_DELETE_BY_DESCRIPTION = 3;

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
  const { memories } = await scope.list({ limit: 500 });
  return memories.filter((m) => m._id.slice(4).startsWith(hex));
}

async function byDescription(scope: ScopedMemories, deps: ForgetMemoryDeps, description: string, signal: AbortSignal) {
  const { memories } = await scope.list({ limit: 500 });
  if (memories.length === 0) return { sure: [], possible: [] };
  const [vector] = await deps.embedder.embed([description], { signal });
  const query = Float32Array.from(vector ?? []);
  const wanted = offlineTokens(description);
  const scored = memories.map((m) => {
    const words = new Set(offlineTokens(`${m.text} ${m.kind === 'fact' ? `${m.predicate} ${m.value}` : m.statement}`));
    // Every content word of the description in the memory is as good as a strong embedding match.
    const lexical = wanted.length > 0 && wanted.every((w) => words.has(w));
    const similarity = m.embedderId === deps.embedder.id ? cosine(query, m.embedding) : 0;
    return { m, similarity, sure: lexical || similarity >= deps.thresholds.strong, possible: similarity >= deps.thresholds.weak };
  });
  scored.sort((a, b) => b.similarity - a.similarity);
  return { sure: scored.filter((s) => s.sure).map((s) => s.m), possible: scored.filter((s) => !s.sure && s.possible).map((s) => s.m) };
}

/**
 * `forget_memory`: deletes long-term memories about the user, within the
 * session's namespace only. Destructive, so the user confirms every call.
 */
export function forgetMemoryTool(deps: ForgetMemoryDeps): NativeTool {
  const tool = defineTool({
    name: 'forget_memory',
    description:
      'Deletes things you remember about the user across sessions (facts, preferences, plans). Use it only when the user ' +
      'asks you to forget something or says a remembered item is wrong and should go; the user confirms before it runs. ' +
      'Pass memory_id when you know it (the id you cite, e.g. "mem:ab12"), otherwise a short description of what to ' +
      'forget, e.g. "that I am vegetarian". Deleting by description removes at most 3 clear matches; when more match, or ' +
      'only uncertain ones, it deletes nothing and returns the candidates with their ids so you can ask the user and call ' +
      'again with memory_id. Do not use it to correct a fact: the new value replaces the old one on its own.',
    parameters: z.object({
      memory_id: MemoryRef.optional().describe('The id of one memory, e.g. "mem:ab12".'),
      description: z.string().trim().min(2).max(300).optional().describe('What to forget, in the user\'s words, e.g. "my home address".'),
      reason: z.string().max(300).optional().describe('Why, if the user said.'),
    }),
    risk: 'destructive',
    idempotent: true,
    async execute(args, ctx: ToolRunContext) {
      if (!args.memory_id && !args.description) throw new ToolInputError('give memory_id or description');
      const scope = deps.repo.forNamespace(ctx.namespace);
      let targets: MemoryDoc[];
      let possible: MemoryDoc[] = [];
      if (args.memory_id) {
        targets = await byId(scope, args.memory_id);
        if (targets.length === 0) throw new ToolPermanentError(`no active memory ${args.memory_id} exists for this user`);
        if (targets.length > 1) {
          throw new ToolInputError(`memory id ${args.memory_id} is ambiguous; use one of: ${targets.map((t) => t._id).join(', ')}`);
        }
      } else {
        const found = await byDescription(scope, deps, args.description as string, ctx.signal);
        targets = found.sure;
        possible = found.possible;
        if (targets.length > MAX_DELETE_BY_DESCRIPTION) {
          return { deleted: [], count: 0, tooManyMatches: targets.map(brief), message: 'More than 3 memories match; ask the user which to forget and call again with memory_id.' };
        }
      }
      const now = (deps.clock ?? (() => new Date()))();
      const reason = args.reason ?? `forget_memory: ${args.memory_id ?? args.description}`;
      const deleted: ReturnType<typeof brief>[] = [];
      for (const target of targets) {
        const actor = { by: 'tool' as const, sessionId: ctx.sessionId, ...(ctx.turnId ? { turnId: ctx.turnId } : {}), toolCallId: ctx.toolCallId ?? ctx.idempotencyKey };
        const before = await scope.delete(target._id, reason, { actor, now });
        if (before) deleted.push(brief(before));
      }
      return {
        deleted,
        count: deleted.length,
        ...(possible.length > 0 ? { possibleMatches: possible.slice(0, 5).map(brief) } : {}),
        ...(deleted.length === 0 && possible.length === 0 ? { message: 'Nothing matched; nothing was deleted.' } : {}),
      };
    },
  });
  return tool as unknown as NativeTool;
}
