import { completeJson, ModelPurpose, type ModelCallDeps } from '../model-call';
import { embedMemories, type Embedder } from './embedder';
import { buildExtractionMessages, parseExtractionOutput } from './extraction-prompt';
import type { ExtractMemoriesInput, ExtractionCounts } from './memory-activity-types';
import { ttlMs, type MemoryConfig } from './memory-config';
import type { MemoryLog } from './memory-log';
import type { MemoryRepository, WriteResult } from './memory-repository';
import { MemoryDocError } from './memory-types';
import { emptyRejectionCounts, gateCandidate, type GatedMemory } from './quality-gate';
import { flattenTurns } from './transcript';

export interface ExtractionDeps extends ModelCallDeps {
  repo: MemoryRepository;
  modelName: string;
  embedder: Embedder;
  config: MemoryConfig;
  clock: () => Date;
  log: MemoryLog;
}

export interface ExtractionRun {
  signal?: AbortSignal;
  /** Called between steps so a long pass keeps its activity alive. */
  heartbeat?: () => void;
}

export function emptyExtractionCounts(): ExtractionCounts {
  return { candidates: 0, created: 0, overwritten: 0, reinforced: 0, superseded: 0, unchanged: 0, rejected: emptyRejectionCounts(), errors: 0 };
}

const DAY_MS = 86_400_000;

/**
 * One extraction pass: ask the model for candidates, gate them, embed the
 * ones that pass, and write them. Every write is idempotent per source
 * message, so a retried pass changes nothing twice.
 */
export async function runExtraction(deps: ExtractionDeps, input: ExtractMemoriesInput, run: ExtractionRun = {}): Promise<ExtractionCounts> {
  const counts = emptyExtractionCounts();
  if (!deps.config.enabled) return counts;
  const context = input.contextTurns ?? [];
  const transcript = flattenTurns([...context, ...input.turns]);
  // Messages before this index were read by an earlier pass.
  const firstNewIndex = flattenTurns(context).length;
  if (!transcript.slice(firstNewIndex).some((m) => m.role === 'user')) return counts;
  const scope = deps.repo.forNamespace(input.namespace);
  const now = deps.clock();

  const known = await scope.list({ kinds: ['fact', 'preference', 'intent'], limit: 40 });
  run.heartbeat?.();
  const parsed = await completeJson(
    deps,
    { purpose: ModelPurpose.Extraction, model: deps.modelName, temperature: 0, sessionId: input.sessionId, namespace: input.namespace, ...(run.signal ? { signal: run.signal } : {}) },
    buildExtractionMessages(transcript, known.memories, firstNewIndex),
    parseExtractionOutput,
  );
  run.heartbeat?.();

  counts.candidates = parsed.total;
  counts.rejected.malformed += parsed.malformed;
  counts.rejected.over_limit += parsed.overLimit;
  const passed: Array<{ memory: GatedMemory; at: number }> = [];
  for (const candidate of parsed.candidates) {
    const verdict = gateCandidate(candidate, { sessionId: input.sessionId, messages: transcript, firstNewIndex, now });
    if (verdict.ok) passed.push({ memory: verdict.memory, at: candidate.sourceMessageIndex });
    else {
      counts.rejected[verdict.reason]++;
      deps.log.debug('memory candidate rejected', { reason: verdict.reason, detail: verdict.detail, kind: candidate.kind, sessionId: input.sessionId });
    }
  }
  if (passed.length === 0) return counts;

  // In message order, so a correction later in the excerpt lands last.
  passed.sort((a, b) => a.at - b.at);
  const vectors = await embedMemories(
    deps.embedder,
    passed.map((p) => p.memory.text),
    { signal: run.signal },
  );
  run.heartbeat?.();
  const startedAt = new Map([...context, ...input.turns].map((t) => [t.turnId, t.startedAt]));
  const ctx = { actor: { by: 'extraction' as const, sessionId: input.sessionId, turnId: input.turns.at(-1)?.turnId }, now };
  for (const [i, { memory: m }] of passed.entries()) {
    const statedAtIso = startedAt.get(m.source.turnId);
    const statedAt = statedAtIso && !Number.isNaN(Date.parse(statedAtIso)) ? new Date(statedAtIso) : now;
    const common = { text: m.text, embedding: vectors[i] ?? [], embedderId: deps.embedder.id, source: m.source, statedAt };
    const expiresAt = new Date(now.getTime() + ttlMs(deps.config, m.kind));
    let result: WriteResult;
    try {
      switch (m.kind) {
        case 'fact':
          result = await scope.writeFact({ ...common, expiresAt, subject: m.subject, predicate: m.predicate, key: m.key, value: m.value }, ctx);
          break;
        case 'preference':
          result = await scope.writePreference({ ...common, expiresAt, statement: m.statement, polarity: m.polarity, ...(m.topic ? { topic: m.topic } : {}) }, ctx);
          break;
        case 'intent': {
          // A plan with an end date lasts until a day after it, never longer than the intent TTL.
          const until = m.validUntil ? new Date(m.validUntil.getTime() + DAY_MS) : expiresAt;
          result = await scope.addIntent({ ...common, expiresAt: until < expiresAt ? until : expiresAt, statement: m.statement }, ctx);
          break;
        }
      }
    } catch (err) {
      if (!(err instanceof MemoryDocError)) throw err;
      counts.errors++;
      deps.log.warn('memory not written: the stored document is malformed', { memoryId: err.memoryId, fields: err.fields, error: err.message });
      continue;
    }
    counts[result.outcome]++;
    counts.superseded += result.superseded.length;
    run.heartbeat?.();
  }
  return counts;
}
