import { asyncLocalStorage } from '@temporalio/activity';
import { countMetric, observeMetric } from '../metrics';
import { ApplicationFailure } from '@temporalio/common';
import type { Db } from 'mongodb';
import type OpenAI from 'openai';
import { FailureType } from '../../workflows/failure-types';
import type { UsageStore } from '../usage/usage-store';
import { thresholdsFor, type Embedder } from './embedder';
import { emptyExtractionCounts, runExtraction } from './extraction';
import type {
  DeleteMemoryInput,
  DeleteMemoryResult,
  ExtractMemoriesInput,
  ExtractionCounts,
  ListMemoriesInput,
  ListMemoriesResult,
  MemoryActivities,
  MemoryAuditInput,
  MemoryAuditResult,
  RecallMemoriesInput,
  RecallMemoriesResult,
  SweepExpiredMemoriesInput,
} from './memory-activity-types';
import { auditRetentionMs, type MemoryConfig } from './memory-config';
import { activityLog, type MemoryLog } from './memory-log';
import { auditViewOf, listCursorOf, listPositionOf } from './memory-docs';
import { MemoryRepository, viewOf, type ScopedMemories } from './memory-repository';
import { MemoryId, MemoryNamespace, type AuditActor, type MemoryDocError } from './memory-types';
import { formatRecallRegion, queryScorer, recallTiers, type RecallPolicy, type ScoredMemory } from './recall';
import { RecallCache } from './recall-cache';
import { isUnsupportedSearch, mapVectorHits, vectorSearchLimits, type VectorSearchProbe } from './vector-search';

export interface MemoryActivityDeps {
  db: Db;
  openai: OpenAI;
  embedder: Embedder;
  /** The chat model that extracts candidates. */
  modelName: string;
  /** Where extraction's model calls record their tokens, per tenant, user and session. */
  usage?: UsageStore;
  /** Takes configured secrets out of what extraction's model calls put in trace spans. */
  redact?: (text: string) => string;
  config: MemoryConfig;
  clock?: () => Date;
  /** Shared per worker; tests pass their own to observe or reset it. */
  cache?: RecallCache;
  log?: MemoryLog;
  /** Whether recall ranks on the server (Atlas `$vectorSearch`) or here; made from the config when absent. */
  vectorSearch?: VectorSearchProbe;
}

function scopeFor(repo: MemoryRepository, namespace: unknown): ScopedMemories {
  const parsed = MemoryNamespace.safeParse(namespace);
  if (!parsed.success) {
    const detail = parsed.error.issues.map((i) => `namespace.${i.path.join('.')}: ${i.message}`).join('; ');
    throw ApplicationFailure.nonRetryable(`Memory access needs a valid namespace: ${detail}`, FailureType.SessionInputInvalid);
  }
  return repo.forNamespace(parsed.data);
}

const PURGE_BUDGET_MS = 120_000;
/** The expiry pass's share of the sweep, before the purge's. */
const SWEEP_BUDGET_MS = 120_000;

/**
 * Who a deletion is recorded as: the user, or an admin of the tenant (the
 * workflow checked that the principal is one of them). Callers from before
 * the principal was passed are recorded as the user, as they always were.
 */
function deleterOf(input: DeleteMemoryInput): AuditActor {
  const by = input.deletedBy;
  if (!by) return { by: 'user' };
  const own = by.tenant === input.namespace.tenant && by.user === input.namespace.user;
  return { by: own ? 'user' : 'admin', principal: { tenant: by.tenant, user: by.user } };
}

/** The memory activities, built from injected dependencies. */
export function createMemoryActivities(deps: MemoryActivityDeps): MemoryActivities {
  const repo = new MemoryRepository(deps.db);
  const clock = deps.clock ?? (() => new Date());
  const log = deps.log ?? activityLog;
  const cache = deps.cache ?? new RecallCache({ maxAgeMs: deps.config.cacheMaxAgeMs, log });
  // Per query: an embedder of two models applies the thresholds of the model the query goes to.
  const thresholdsOf = thresholdsFor(deps.embedder, deps.config);
  const policyFor = (query: string) => {
    const thresholds = thresholdsOf(query);
    return {
      strong: thresholds.strong,
      weak: thresholds.weak,
      maxStrong: deps.config.maxStrong,
      maxStrongChars: deps.config.maxStrongChars,
      maxWeak: deps.config.maxWeak,
      maxWeakChars: deps.config.maxWeakChars,
    };
  };
  const warnedGenerations = new Map<string, number>();
  const vectorSearch = deps.vectorSearch ?? repo.vectorSearchProbe(deps.config.vectorSearch, deps.config.vectorSearchIndex, log);
  // Asked now, as the worker starts (one round trip), so its first recall does not wait for the answer.
  if (deps.config.enabled) void vectorSearch.path();
  const atlasLimits = vectorSearchLimits(deps.config.maxStrong, deps.config.maxWeak);
  const warnedOtherEmbedder = new Map<string, number>();

  /**
   * Ranks on the server with Atlas `$vectorSearch`; null when the server
   * turns out not to support it (the probe then sends every later recall to
   * the local path).
   */
  async function atlasRanked(scope: ScopedMemories, vector: number[], now: Date, policy: RecallPolicy): Promise<{ scored: ScoredMemory[]; belowWeak: number; otherEmbedder: number; malformed: number } | null> {
    try {
      const [hits, otherEmbedder] = await Promise.all([
        scope.vectorSearch({ index: deps.config.vectorSearchIndex, embedderId: deps.embedder.id, queryVector: vector, now, ...atlasLimits }),
        scope.countOtherEmbedders(deps.embedder.id, now),
      ]);
      const mapped = mapVectorHits(hits, { nsKey: scope.nsKey, embedderId: deps.embedder.id, now, weak: policy.weak });
      if (mapped.rejected.length > 0) log.warn('vector search hits left out of recall', { count: mapped.rejected.length, hits: mapped.rejected.slice(0, 10) });
      return { scored: mapped.scored, belowWeak: mapped.belowWeak, otherEmbedder, malformed: mapped.rejected.length };
    } catch (err) {
      if (!isUnsupportedSearch(err)) throw err;
      vectorSearch.fallBack(err);
      return null;
    }
  }

  /** Tiers, caps and formats what either path ranked, and reports what it left out. */
  function finish(
    result: RecallMemoriesResult,
    scope: ScopedMemories,
    ranked: { scored: ScoredMemory[]; belowWeak: number; otherEmbedder: number; malformed: number; malformedErrors: MemoryDocError[]; generation: number; fromCache: boolean },
    now: Date,
    started: number,
    policy: RecallPolicy,
  ): RecallMemoriesResult {
    if (ranked.malformedErrors.length > 0 && warnedGenerations.get(scope.nsKey) !== ranked.generation) {
      warnedGenerations.set(scope.nsKey, ranked.generation);
      log.warn('malformed memory documents skipped in recall', {
        count: ranked.malformedErrors.length,
        errors: ranked.malformedErrors.slice(0, 10).map((e) => e.message),
      });
    }
    // A half-finished re-embed (reembed.ts): memories still holding another model's vectors are never ranked with this one's.
    if (ranked.otherEmbedder > 0 && warnedOtherEmbedder.get(scope.nsKey) !== ranked.otherEmbedder) {
      warnedOtherEmbedder.set(scope.nsKey, ranked.otherEmbedder);
      log.warn('memories embedded by another embedder left out of recall; run npm run memory:reembed', { count: ranked.otherEmbedder, embedderId: deps.embedder.id });
    }
    result.skipped.otherEmbedder = ranked.otherEmbedder;
    const tiers = recallTiers(ranked.scored, policy, now);
    result.strong = tiers.strong;
    result.weak = tiers.weak;
    result.region = formatRecallRegion(tiers.strong, tiers.weak);
    result.injectedIds = [...tiers.strong, ...tiers.weak].map((m) => m.shortId);
    result.skipped.belowWeak = ranked.belowWeak + tiers.belowWeak;
    result.skipped.overCap = tiers.overCap;
    result.skipped.malformed = ranked.malformed;
    result.cacheHit = ranked.fromCache;
    result.tookMs = Math.round((performance.now() - started) * 1000) / 1000;
    countMetric('recalls', { tier: result.strong.length > 0 ? 'strong' : result.weak.length > 0 ? 'weak' : 'none' });
    observeMetric('recallSeconds', result.tookMs / 1000);
    return result;
  }

  return {
    /**
     * Embeds the user's message, scores the namespace's live memories and
     * returns the strong and weak tiers plus the region to inject.
     */
    async recallMemories(input: RecallMemoriesInput): Promise<RecallMemoriesResult> {
      const started = performance.now();
      const policy = policyFor(input.query);
      const result: RecallMemoriesResult = {
        strong: [],
        weak: [],
        tookMs: 0,
        region: '',
        injectedIds: [],
        embedderId: deps.embedder.id,
        thresholds: { strong: policy.strong, weak: policy.weak },
        cacheHit: false,
        skipped: { belowWeak: 0, overCap: 0, malformed: 0, otherEmbedder: 0 },
      };
      if (!deps.config.enabled || input.query.trim() === '') return { ...result, tookMs: performance.now() - started };
      const scope = scopeFor(repo, input.namespace);
      const now = clock();
      const signal = asyncLocalStorage.getStore()?.cancellationSignal;
      // Decided once per worker (a resolved promise after the first recall).
      if ((await vectorSearch.path()) === 'atlas') {
        const [vector] = await deps.embedder.embed([input.query], { signal });
        const atlas = await atlasRanked(scope, vector ?? [], now, policy);
        if (atlas) return finish({ ...result, recallPath: 'atlas' }, scope, { ...atlas, generation: -1, fromCache: false, malformedErrors: [] }, now, started, policy);
      }
      // The generation read goes out first (and on a cold worker the stored copy's); embedding and scoring the cached copy overlap with it.
      const generation = scope.generation();
      generation.catch(() => undefined);
      const embedded = deps.embedder.embed([input.query], { signal }).then(([vector]) => vector ?? []);
      const scorer = embedded.then((vector) => queryScorer(vector));
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
          // Exactly 0 shares nothing (another script's memory under the default embedder), even where weak is set at or below 0.
          if (similarity < policy.weak || similarity === 0) {
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
      result.recallPath = 'local';
      const { scored, belowWeak, otherEmbedder } = outcome.value;
      return finish(result, scope, { scored, belowWeak, otherEmbedder, malformed: outcome.malformed.length, malformedErrors: outcome.malformed, generation: outcome.generation, fromCache: outcome.fromCache }, now, started, policy);
    },

    /** Asks the model for candidates in the given turns, gates them and writes what passes. */
    async extractMemories(input: ExtractMemoriesInput): Promise<ExtractionCounts> {
      if (!deps.config.enabled) return emptyExtractionCounts();
      scopeFor(repo, input.namespace);
      const ctx = asyncLocalStorage.getStore();
      const counts = await runExtraction(
        { repo, openai: deps.openai, usage: deps.usage, redact: deps.redact, modelName: deps.modelName, embedder: deps.embedder, config: deps.config, clock, log },
        input,
        { signal: ctx?.cancellationSignal, heartbeat: ctx ? () => ctx.heartbeat() : undefined },
      );
      for (const reason of ['created', 'overwritten', 'reinforced', 'unchanged'] as const) countMetric('memoryWrites', { result: 'accepted', reason }, counts[reason]);
      for (const [reason, n] of Object.entries(counts.rejected)) countMetric('memoryWrites', { result: 'rejected', reason }, n);
      return counts;
    },

    /**
     * Marks every memory past its expiry as expired (all namespaces), then
     * purges the content of memories deleted or expired longer than the audit
     * retention ago and of older audit entries; run by a Temporal Schedule.
     */
    async sweepExpiredMemories(input: SweepExpiredMemoriesInput = {}): Promise<{ expired: number; purged: number; auditsScrubbed: number }> {
      const now = input.now ? new Date(input.now) : clock();
      if (Number.isNaN(now.getTime())) throw ApplicationFailure.nonRetryable(`now "${input.now}" is not an ISO date`, FailureType.SessionInputInvalid);
      // Both bounded, one after the other, well inside the activity's 5-minute timeout: a backlog of expiries no
      // longer keeps the purge (deleted content, "forget means forgotten") from running; the next sweep continues.
      const sweep = await repo.sweepExpired(now, { budgetMs: SWEEP_BUDGET_MS, onMalformed: (e) => log.warn('malformed memory left unexpired', { error: e.message }) });
      const { expired } = sweep;
      countMetric('memoriesExpired', {}, expired);
      if (!sweep.complete) log.warn('memory expiry stopped at its time budget; the next sweep continues', { expired });
      // Bounded well inside the activity's 5-minute timeout; a large backlog is worked off over several sweeps.
      const purge = await repo.purgeEnded(now, auditRetentionMs(deps.config), { budgetMs: PURGE_BUDGET_MS });
      if (purge.purged + purge.auditsScrubbed + purge.copiesDropped + purge.claimsFinished > 0) log.debug('memory content purged after the audit retention', { ...purge });
      if (!purge.complete) log.warn('memory purge stopped at its time budget; the next sweep continues', { ...purge });
      return { expired, purged: purge.purged, auditsScrubbed: purge.auditsScrubbed };
    },

    /** The user's memories, newest first, for the client. */
    async listMemories(input: ListMemoriesInput): Promise<ListMemoriesResult> {
      const scope = scopeFor(repo, input.namespace);
      const after = input.after === undefined ? undefined : listPositionOf(input.after);
      if (after === null) throw ApplicationFailure.nonRetryable(`after "${String(input.after).slice(0, 80)}" is not the next of a memory list`, FailureType.SessionInputInvalid);
      if (input.contains !== undefined && (typeof input.contains !== 'string' || input.contains.length > 200)) {
        throw ApplicationFailure.nonRetryable('contains must be text of at most 200 characters', FailureType.SessionInputInvalid);
      }
      const { memories, malformed, next } = await scope.list({ kinds: input.kinds, statuses: input.statuses, limit: input.limit, ...(input.contains ? { contains: input.contains } : {}), ...(after ? { after } : {}) });
      if (malformed.length > 0) log.warn('malformed memory documents left out of the list', { errors: malformed.slice(0, 10).map((e) => e.message) });
      return { memories: memories.map(viewOf), malformed: malformed.length, ...(next ? { next: listCursorOf(next) } : {}) };
    },

    /** Deletes one of the user's memories (status `deleted`, audited). Another namespace's id deletes nothing. */
    async deleteMemory(input: DeleteMemoryInput): Promise<DeleteMemoryResult> {
      const scope = scopeFor(repo, input.namespace);
      if (!MemoryId.safeParse(input.memoryId).success) return { deleted: false };
      const actor = deleterOf(input);
      const before = await scope.delete(input.memoryId, input.reason ?? `deleted by ${actor.by === 'admin' ? 'an admin' : 'the user'}`, { actor, now: clock() });
      return before ? { deleted: true, memory: viewOf(before) } : { deleted: false };
    },

    /** One memory's audit trail, oldest first; another namespace's id reads nothing. */
    async memoryAuditTrail(input: MemoryAuditInput): Promise<MemoryAuditResult> {
      const scope = scopeFor(repo, input.namespace);
      if (!MemoryId.safeParse(input.memoryId).success) return { entries: [], malformed: 0 };
      const { entries, malformed } = await scope.readAudit(input.memoryId);
      if (malformed.length > 0) log.warn('malformed memory audit entries left out of the trail', { errors: malformed.slice(0, 10).map((e) => e.message) });
      return { entries: entries.map(auditViewOf), malformed: malformed.length };
    },
  };
}
