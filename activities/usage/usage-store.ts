import { ApplicationFailure } from '@temporalio/common';
import type { Db, MongoServerError } from 'mongodb';
import { z } from 'zod';
import { FailureType } from '../../workflows/failure-types';
import { BatchedInserts, DEFAULT_BATCHED_INSERTS, type BatchedInsertOptions } from '../batched-inserts';

export const USAGE_COLLECTION = 'usage_events';

/**
 * Prices per million tokens, by model name, from MODEL_PRICES (JSON), e.g.
 * `{"gpt-4o-mini": {"inputPerMillion": 0.15, "outputPerMillion": 0.6}}`, in
 * one currency (MODEL_PRICES_CURRENCY, default USD).
 */
export const PriceTable = z.record(
  z.string().min(1),
  z.object({ inputPerMillion: z.number().min(0).max(10_000), outputPerMillion: z.number().min(0).max(10_000) }).strict(),
);
export type PriceTable = z.infer<typeof PriceTable>;

export function priceTableFromEnv(env: NodeJS.ProcessEnv): { prices: PriceTable; currency: string } {
  const raw = env.MODEL_PRICES?.trim();
  const currency = env.MODEL_PRICES_CURRENCY?.trim() || 'USD';
  if (!raw) return { prices: {}, currency };
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    throw new Error('MODEL_PRICES must be JSON such as {"gpt-4o-mini": {"inputPerMillion": 0.15, "outputPerMillion": 0.6}}');
  }
  const parsed = PriceTable.safeParse(json);
  if (!parsed.success) throw new Error(`MODEL_PRICES is invalid: ${parsed.error.issues.slice(0, 5).map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`);
  return { prices: parsed.data, currency };
}

/** One model call's tokens, once per scheduled activity (its retries share the id). */
export interface UsageEvent {
  /** `<workflowId>/<runId>/<activityId>`: a retried activity writes nothing twice. */
  id: string;
  tenant: string;
  user: string;
  sessionId: string;
  model: string;
  /** What the call was for (step, summary, extraction); absent in records from before it was kept. */
  purpose?: string;
  at: Date;
  inputTokens: number;
  outputTokens: number;
}

export interface UsageQuery {
  tenant: string;
  user?: string;
  sessionId?: string;
  /** Whole UTC days, today included (1 = today). */
  days: number;
}

export interface UsageRow {
  day: string;
  model: string;
  inputTokens: number;
  outputTokens: number;
  /** Null when the model has no price in MODEL_PRICES. */
  cost: number | null;
}

export interface UsageSummary {
  query: UsageQuery;
  currency: string;
  rows: UsageRow[];
  total: { inputTokens: number; outputTokens: number; cost: number; calls: number };
  /** Models used without a price: their tokens are counted, their cost is not. */
  unpriced: string[];
}

const isDuplicateKey = (err: unknown) => (err as MongoServerError | undefined)?.code === 11000;
const dayOf = (d: Date) => d.toISOString().slice(0, 10);

type UsageDoc = { _id: string; tenant: string; user: string; sessionId: string; model: string; purpose?: string; at: Date; day: string; inputTokens: number; outputTokens: number };

const usageDoc = (e: UsageEvent): UsageDoc => ({
  _id: e.id,
  tenant: e.tenant,
  user: e.user,
  sessionId: e.sessionId,
  model: e.model,
  ...(e.purpose ? { purpose: e.purpose } : {}),
  at: e.at,
  day: dayOf(e.at),
  inputTokens: e.inputTokens,
  outputTokens: e.outputTokens,
});

export class UsageStore {
  /** Records written behind their calls, a batch at a time. */
  private readonly inserts: BatchedInserts<UsageDoc>;

  constructor(
    private readonly db: Db,
    private readonly pricing: { prices: PriceTable; currency: string } = { prices: {}, currency: 'USD' },
    batching: BatchedInsertOptions = DEFAULT_BATCHED_INSERTS,
  ) {
    this.inserts = new BatchedInserts(() => this.collection, batching);
  }

  private get collection() {
    return this.db.collection<UsageDoc>(USAGE_COLLECTION);
  }

  async ensureIndexes(): Promise<void> {
    await this.collection.createIndex({ tenant: 1, day: 1, user: 1 });
    await this.collection.createIndex({ sessionId: 1 });
  }

  /**
   * Records one call behind the caller's back: a model step with an instant
   * model need not wait for MongoDB. Records within the batch delay
   * (MONGODB_WRITE_BATCH_MS) of each other (several steps, several
   * sessions) share one insert; a failed
   * insert is tried twice more. Reads on this worker (summaries, budget
   * checks) first write what is queued and wait for it, so a turn's budget
   * check sees the turn before it. A worker killed between a call's
   * completion and its batch's write (at most the batch delay) loses that
   * record.
   */
  recordBehind(e: UsageEvent, onError: (err: unknown) => void): void {
    this.inserts.add([usageDoc(e)]).catch(onError);
  }

  /** Resolves once the records queued or being written on this worker are written (or failed). */
  async settled(): Promise<void> {
    await this.inserts.settled();
  }

  /** Records one call; the same id again (a retried activity) changes nothing. */
  async record(e: UsageEvent): Promise<{ recorded: boolean }> {
    try {
      await this.collection.insertOne(usageDoc(e));
      return { recorded: true };
    } catch (err) {
      if (isDuplicateKey(err)) return { recorded: false };
      throw err;
    }
  }

  /** Tokens and cost by day and model (UTC days), for a tenant, one of its users, or one session. */
  async summarize(query: UsageQuery, now = new Date()): Promise<UsageSummary> {
    await this.settled();
    if (!Number.isInteger(query.days) || query.days < 1 || query.days > 366) {
      throw ApplicationFailure.nonRetryable(`days must be a whole number from 1 to 366, got ${String(query.days)}`, FailureType.SessionInputInvalid);
    }
    const from = dayOf(new Date(now.getTime() - (query.days - 1) * 86_400_000));
    const filter = { tenant: query.tenant, day: { $gte: from }, ...(query.user ? { user: query.user } : {}), ...(query.sessionId ? { sessionId: query.sessionId } : {}) };
    const rows = new Map<string, UsageRow>();
    let calls = 0;
    for await (const doc of this.collection.find(filter, { projection: { day: 1, model: 1, inputTokens: 1, outputTokens: 1 } })) {
      calls += 1;
      const key = `${doc.day}|${doc.model}`;
      const row = rows.get(key) ?? { day: doc.day, model: doc.model, inputTokens: 0, outputTokens: 0, cost: null };
      row.inputTokens += doc.inputTokens;
      row.outputTokens += doc.outputTokens;
      rows.set(key, row);
    }
    const unpriced = new Set<string>();
    let cost = 0;
    for (const row of rows.values()) {
      const price = this.pricing.prices[row.model];
      if (!price) {
        unpriced.add(row.model);
        continue;
      }
      row.cost = (row.inputTokens * price.inputPerMillion + row.outputTokens * price.outputPerMillion) / 1_000_000;
      cost += row.cost;
    }
    const sorted = [...rows.values()].sort((a, b) => a.day.localeCompare(b.day) || a.model.localeCompare(b.model));
    return {
      query,
      currency: this.pricing.currency,
      rows: sorted,
      total: { inputTokens: sorted.reduce((n, r) => n + r.inputTokens, 0), outputTokens: sorted.reduce((n, r) => n + r.outputTokens, 0), cost, calls },
      unpriced: [...unpriced].sort(),
    };
  }
}
