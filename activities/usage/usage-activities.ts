import type { UsageQuery, UsageStore, UsageSummary } from './usage-store';

export interface UsageActivities {
  summarizeUsage(input: UsageQuery): Promise<UsageSummary>;
}

export function createUsageActivities(store: UsageStore | undefined): UsageActivities {
  return {
    async summarizeUsage(query: UsageQuery): Promise<UsageSummary> {
      if (!store) return { query, currency: 'USD', rows: [], total: { inputTokens: 0, outputTokens: 0, cost: 0, calls: 0 }, unpriced: [] };
      return store.summarize(query);
    },
  };
}
