import { asyncLocalStorage } from '@temporalio/activity';
import { countMetric, observeMetric } from '../metrics';
import { ApplicationFailure } from '@temporalio/common';
import type { Db } from 'mongodb';
import type OpenAI from 'openai';
import { FailureType } from '../../workflows/failure-types';
import { resolveThresholds, type Embedder } from './embedder';
import { emptyExtractionCounts, runExtraction } from './extraction';
import type {
  DeleteMemoryInput,
  DeleteMemoryResult,
  ExtractMemoriesInput,
  ExtractionCounts,
  ListMemoriesInput,
  ListMemoriesResult,
  MemoryActivities,
  RecallMemoriesInput,
  RecallMemoriesResult,
  SweepExpiredMemoriesInput,
} from './memory-activity-types';
import type { MemoryConfig } from './memory-config';
import { activityLog, type MemoryLog } from './memory-log';
import { MemoryRepository, viewOf, type ScopedMemories } from './memory-repository';
import { MemoryId, MemoryNamespace } from './memory-types';
import { formatRecallRegion, queryScorer, recallTiers, type ScoredMemory } from './recall';
import { RecallCache } from './recall-cache';

export interface MemoryActivityDeps {
  db: Db;
  openai: OpenAI;
  embedder: Embedder;
  /** The chat model that extracts candidates. */
  modelName: string;
  config: MemoryConfig;
  clock?: () => Date;
  /** Shared per worker; tests pass their own to observe or reset it. */
  cache?: RecallCache;
  log?: MemoryLog;
}

function scopeFor(repo: MemoryRepository, namespace: unknown): ScopedMemories {
  const parsed = MemoryNamespace.safeParse(namespace);
  if (!parsed.success) {
    const detail = parsed.error.issues.map((i) => `namespace.${i.path.join('.')}: ${i.message}`).join('; ');
    throw ApplicationFailure.nonRetryable(`Memory access needs a valid namespace: ${detail}`, FailureType.SessionInputInvalid);
  }
  return repo.forNamespace(parsed.data);
}

/** The memory activities, built from injected dependencies. */
export function createMemoryActivities(deps: MemoryActivityDeps): MemoryActivities {
  const repo = new MemoryRepository(deps.db);
  const clock = deps.clock ?? (() => new Date());
  const log = deps.log ?? activityLog;
  const cache = deps.cache ?? new RecallCache({ maxAgeMs: deps.config.cacheMaxAgeMs, log });
  const thresholds = resolveThresholds(deps.embedder.id, deps.config);
  const policy = {
    strong: thresholds.strong,
    weak: thresholds.weak,
    maxStrong: deps.config.maxStrong,
    maxStrongChars: deps.config.maxStrongChars,
    maxWeak: deps.config.maxWeak,
    maxWeakChars: deps.config.maxWeakChars,
  };
  const warnedGenerations = new Map<string, number>();

  return {
    /**
     * Embeds the user's message, scores the namespace's live memories and
     * returns the strong and weak tiers plus the region to inject.
     */
    async recallMemories(input: RecallMemoriesInput): Promise<RecallMemoriesResult> {
      const started = performance.now();
      const result: RecallMemoriesResult = {
        strong: [],
        weak: [],
        tookMs: 0,
        region: '',
        injectedIds: [],
        embedderId: deps.embedder.id,
        thresholds: { strong: thresholds.strong, weak: thresholds.weak },
        cacheHit: false,
        skipped: { belowWeak: 0, overCap: 0, malformed: 0, otherEmbedder: 0 },
      };
      if (!deps.config.enabled || input.query.trim() === '') return { ...result, tookMs: performance.now() - started };
      const scope = scopeFor(repo, input.namespace);
      const now = clock();
      const signal = asyncLocalStorage.getStore()?.cancellationSignal;
      // The generation read goes out first (and on a cold worker the stored copy's); embedding and scoring the cached copy overlap with it.
      const generation = scope.generation();
      generation.catch(() => undefined);
      const scorer = deps.embedder.embed([input.query], { signal }).then(([vector]) => queryScorer(vector ?? []));
      const outcome = await cache.compute(scope, now, generation, scorer, (entries, score) => {
        // Only memories at or above the weak threshold become objects to rank; the rest are just counted.
        const scored: ScoredMemory[] = [];
        let belowWeak = 0;
        let otherEmbedder = 0;
        for (const entry of entries) {
          // Expiry is enforced here too: the sweep may not have run yet, and the cache may predate the expiry.
          if (entry.expiresAt <= now) continue;
          if (entry.embedderId !== deps.embedder.id) {
            otherEmbedder++;
            continue;
          }
          const similarity = score(entry.unit);
          if (similarity < policy.weak) {
            belowWeak++;
            continue;
          }
          scored.push({
            id: entry.id,
            kind: entry.kind,
            text: entry.text,
            similarity,
            weight: entry.weight,
            createdAt: entry.createdAt,
            updatedAt: entry.updatedAt,
            origin: entry.origin,
          });
        }
        return { scored, belowWeak, otherEmbedder };
      });
      if (outcome.malformed.length > 0 && warnedGenerations.get(scope.nsKey) !== outcome.generation) {
        warnedGenerations.set(scope.nsKey, outcome.generation);
        log.warn('malformed memory documents skipped in recall', {
          count: outcome.malformed.length,
          errors: outcome.malformed.slice(0, 10).map((e) => e.message),
        });
      }
      const { scored, belowWeak } = outcome.value;
      result.skipped.otherEmbedder = outcome.value.otherEmbedder;
      const tiers = recallTiers(scored, policy, now);
      result.strong = tiers.strong;
      result.weak = tiers.weak;
      result.region = formatRecallRegion(tiers.strong, tiers.weak);
      result.injectedIds = [...tiers.strong, ...tiers.weak].map((m) => m.shortId);
      result.skipped.belowWeak = belowWeak + tiers.belowWeak;
      result.skipped.overCap = tiers.overCap;
      result.skipped.malformed = outcome.malformed.length;
      result.cacheHit = outcome.fromCache;
      result.tookMs = Math.round((performance.now() - started) * 1000) / 1000;
      countMetric('recalls', { tier: result.strong.length > 0 ? 'strong' : result.weak.length > 0 ? 'weak' : 'none' });
      observeMetric('recallSeconds', result.tookMs / 1000);
      return result;
    },

    /** Asks the model for candidates in the given turns, gates them and writes what passes. */
    async extractMemories(input: ExtractMemoriesInput): Promise<ExtractionCounts> {
      if (!deps.config.enabled) return emptyExtractionCounts();
      scopeFor(repo, input.namespace);
      const ctx = asyncLocalStorage.getStore();
      const counts = await runExtraction(
        { repo, openai: deps.openai, modelName: deps.modelName, embedder: deps.embedder, config: deps.config, clock, log },
        input,
        { signal: ctx?.cancellationSignal, heartbeat: ctx ? () => ctx.heartbeat() : undefined },
      );
      for (const reason of ['created', 'overwritten', 'reinforced', 'unchanged'] as const) countMetric('memoryWrites', { result: 'accepted', reason }, counts[reason]);
      for (const [reason, n] of Object.entries(counts.rejected)) countMetric('memoryWrites', { result: 'rejected', reason }, n);
      return counts;
    },

    /** Marks every memory past its expiry as expired (all namespaces); run by a Temporal Schedule. */
    async sweepExpiredMemories(input: SweepExpiredMemoriesInput = {}): Promise<{ expired: number }> {
      const now = input.now ? new Date(input.now) : clock();
      if (Number.isNaN(now.getTime())) throw ApplicationFailure.nonRetryable(`now "${input.now}" is not an ISO date`, FailureType.SessionInputInvalid);
      const { expired } = await repo.sweepExpired(now, { onMalformed: (e) => log.warn('malformed memory left unexpired', { error: e.message }) });
      countMetric('memoriesExpired', {}, expired);
      return { expired };
    },

    /** The user's memories, newest first, for the client. */
    async listMemories(input: ListMemoriesInput): Promise<ListMemoriesResult> {
      const scope = scopeFor(repo, input.namespace);
      const { memories, malformed } = await scope.list({ kinds: input.kinds, statuses: input.statuses, limit: input.limit });
      if (malformed.length > 0) log.warn('malformed memory documents left out of the list', { errors: malformed.slice(0, 10).map((e) => e.message) });
      return { memories: memories.map(viewOf), malformed: malformed.length };
    },

    /** Deletes one of the user's memories (status `deleted`, audited). Another namespace's id deletes nothing. */
    async deleteMemory(input: DeleteMemoryInput): Promise<DeleteMemoryResult> {
      const scope = scopeFor(repo, input.namespace);
      if (!MemoryId.safeParse(input.memoryId).success) return { deleted: false };
      const before = await scope.delete(input.memoryId, input.reason ?? 'deleted by the user', { actor: { by: 'user' }, now: clock() });
      return before ? { deleted: true, memory: viewOf(before) } : { deleted: false };
    },
  };
}
