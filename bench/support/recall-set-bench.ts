import type { Db } from 'mongodb';
import type OpenAI from 'openai';
import { embedMemories, type Embedder } from '../../activities/memory/embedder';
import { createMemoryActivities } from '../../activities/memory/memory-activities';
import type { MemoryConfig } from '../../activities/memory/memory-config';
import type { FactInput, IntentInput, PreferenceInput } from '../../activities/memory/memory-docs';
import { MemoryRepository } from '../../activities/memory/memory-repository';
import { MemoryState, namespaceLabel, type LabelledMemory, type RecallSet } from '../../evaluation/recall-set';
import { qualityFigures, storedState, type CaseOutcome, type QualityFigures } from '../../evaluation/recall-set/recall-set-quality';
import { median, round } from './stats';

type SeedDoc = { kind: 'fact'; input: FactInput } | { kind: 'preference'; input: PreferenceInput } | { kind: 'intent'; input: IntentInput };

export interface RecallSetRun extends QualityFigures {
  embedder: string;
  thresholds: { strong: number; weak: number };
  recall_ms_median: number;
}

const DAY = 86_400_000;

/**
 * Runs a labelled set through the real path: every memory written to
 * MongoDB under its namespace (ended ones ended the way the store ends them:
 * `supersede`, `delete`, or an expiry already past), then one
 * `recallMemories` per case with the embedder's thresholds. The database
 * should be empty and of this run alone.
 */
export async function runRecallSet(db: Db, openai: OpenAI, set: RecallSet, embedder: Embedder, config: MemoryConfig, now: Date): Promise<RecallSetRun> {
  const repo = new MemoryRepository(db);
  await repo.ensureIndexes();
  const vectors = await embedMemories(embedder, set.memories.map((m) => m.text));
  const vectorOf = new Map(set.memories.map((m, i) => [m.id, vectors[i] ?? []]));

  const byNamespace = new Map<string, LabelledMemory[]>();
  for (const m of set.memories) byNamespace.set(namespaceLabel(m.namespace), [...(byNamespace.get(namespaceLabel(m.namespace)) ?? []), m]);
  const storedIdOf = new Map<string, string>();
  const labelOf = new Map<string, string>();
  for (const memories of byNamespace.values()) {
    const scope = repo.forNamespace((memories[0] as LabelledMemory).namespace);
    const docs = memories.map((m, i) => seedDoc(m, vectorOf.get(m.id) ?? [], embedder.id, now, i));
    const ids = await scope.importMany(docs, new Date(now.getTime() - 2 * DAY));
    memories.forEach((m, i) => {
      storedIdOf.set(m.id, ids[i] as string);
      labelOf.set(ids[i] as string, m.id);
    });
    const ctx = { actor: { by: 'import' as const }, now: new Date(now.getTime() - DAY) };
    for (const m of memories) {
      const id = storedIdOf.get(m.id) as string;
      if (m.state === MemoryState.Superseded) await scope.supersede(id, storedIdOf.get(m.supersededBy ?? '') ?? id, ctx);
      if (m.state === MemoryState.Deleted) await scope.delete(id, 'deleted in the labelled set', { ...ctx, actor: { by: 'user' } });
    }
  }

  const memory = createMemoryActivities({ db, openai, embedder, modelName: 'unused', config, clock: () => now, log: { debug: () => undefined, warn: () => undefined } });
  const outcomes: CaseOutcome[] = [];
  const took: number[] = [];
  let thresholds = { strong: 0, weak: 0 };
  for (const c of set.cases) {
    const started = performance.now();
    const result = await memory.recallMemories({ namespace: c.namespace, query: c.query, sessionId: 'recall-set', turnId: c.id });
    took.push(performance.now() - started);
    thresholds = result.thresholds;
    // An id the set does not know is counted as a forbidden return by qualityFigures.
    const label = (id: string) => labelOf.get(id) ?? `unknown:${id}`;
    outcomes.push({ caseId: c.id, expected: c.expected, strong: result.strong.map((m) => label(m.id)), weak: result.weak.map((m) => label(m.id)) });
  }
  return { embedder: embedder.id, thresholds, ...qualityFigures(set, outcomes), recall_ms_median: round(median(took), 2) };
}

function seedDoc(m: LabelledMemory, embedding: number[], embedderId: string, now: Date, i: number): SeedDoc {
  const { expiresAt } = storedState(m.state, now);
  const common = {
    text: m.text,
    embedding,
    embedderId,
    source: { sessionId: 'recall-set', turnId: m.id, messageIndex: 0, role: 'user' as const, origin: 'user' as const },
    statedAt: new Date(now.getTime() - (30 + i) * DAY),
    expiresAt,
  };
  switch (m.kind) {
    case 'fact':
      return { kind: 'fact', input: { ...common, subject: 'user', predicate: m.id, key: `user|${m.id}`, value: m.text } };
    case 'preference':
      return { kind: 'preference', input: { ...common, statement: m.text, polarity: 'prefers' } };
    case 'intent':
      return { kind: 'intent', input: { ...common, statement: m.text } };
  }
}
