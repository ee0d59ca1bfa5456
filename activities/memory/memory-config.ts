import { z } from 'zod';

const threshold = z.number().min(-1, 'must be between -1 and 1').max(1, 'must be between -1 and 1');
const days = z.number().int().min(1, 'must be a whole number of days, at least 1');

/**
 * Long-term memory settings (the `memory` section of the runtime config).
 * Thresholds left unset take the embedder's calibrated defaults
 * (`defaultThresholds` in embedder.ts).
 */
export const MemoryConfig = z.object({
  enabled: z.boolean().default(true),
  strongThreshold: threshold.optional(),
  weakThreshold: threshold.optional(),
  /** Time to live per kind: preferences longest, intents shortest. */
  ttlFactDays: days.default(365),
  ttlPreferenceDays: days.default(730),
  ttlIntentDays: days.default(14),
  /** The workflow runs a periodic extraction pass every this many turns. */
  extractEveryTurns: z.number().int().min(1).default(5),
  /** Check that an answer cites only the memory ids injected this turn. */
  citationCheck: z.boolean().default(true),
  maxStrong: z.number().int().min(0).max(50).default(6),
  maxStrongChars: z.number().int().min(0).max(20_000).default(1_500),
  maxWeak: z.number().int().min(0).max(50).default(3),
  maxWeakChars: z.number().int().min(0).max(20_000).default(600),
  /** Vector length asked of the embeddings endpoint (models that support `dimensions`), or of the offline embedder. */
  embeddingDims: z.number().int().min(8).max(8192).optional(),
  /** How long a worker trusts its cached copy of a namespace without a generation change. */
  cacheMaxAgeMs: z.number().int().min(0).default(60_000),
  /**
   * How long a deleted or expired memory's content, and any audit entry's
   * content, is kept before the maintenance sweep purges it (memory-purge.ts).
   */
  auditRetentionDays: days.default(30),
  /**
   * Where recall ranks: `atlas` with MongoDB Atlas `$vectorSearch`, `local`
   * in the worker (FerretDB, plain mongod), `auto` probes once per worker and
   * uses Atlas when the index is there and queryable (vector-search.ts).
   */
  vectorSearch: z.enum(['auto', 'atlas', 'local']).default('auto'),
  /** The Atlas Vector Search index on `memories` (created by `npm run memory:vector-index`). */
  vectorSearchIndex: z.string().min(1).max(64).default('memory_vectors'),
});
export type MemoryConfig = z.infer<typeof MemoryConfig>;

/** The defaults, for tests and callers without a runtime config. */
export const defaultMemoryConfig = (): MemoryConfig => MemoryConfig.parse({});

const DAY_MS = 86_400_000;

export function auditRetentionMs(config: MemoryConfig): number {
  return config.auditRetentionDays * DAY_MS;
}

export function ttlMs(config: MemoryConfig, kind: 'fact' | 'preference' | 'intent'): number {
  switch (kind) {
    case 'fact':
      return config.ttlFactDays * DAY_MS;
    case 'preference':
      return config.ttlPreferenceDays * DAY_MS;
    case 'intent':
      return config.ttlIntentDays * DAY_MS;
  }
}
