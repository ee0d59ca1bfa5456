import { checkBudget, type Budgets, type BudgetAllowance, type BudgetCheckInput } from './budgets';
import type { PriceTable, UsageQuery, UsageStore, UsageSummary } from './usage-store';

export interface UsageActivities {
  summarizeUsage(input: UsageQuery): Promise<UsageSummary>;
  /** Run as a local activity at the start of each turn: what the session's tenant and user may still spend today. */
  checkBudget(input: BudgetCheckInput): Promise<BudgetAllowance | null>;
}

export function createUsageActivities(
  store: UsageStore | undefined,
  budgets: Budgets = { tenants: {}, users: {} },
  pricing: { prices: PriceTable; currency: string } = { prices: {}, currency: 'USD' },
  defaultModel = '',
): UsageActivities {
  return {
    async checkBudget(input: BudgetCheckInput): Promise<BudgetAllowance | null> {
      if (!store) return null;
      return checkBudget({ ...input, model: input.model || defaultModel }, budgets, store, pricing);
    },
    async summarizeUsage(query: UsageQuery): Promise<UsageSummary> {
      if (!store) return { query, currency: 'USD', rows: [], total: { inputTokens: 0, outputTokens: 0, cost: 0, calls: 0 }, unpriced: [] };
      return store.summarize(query);
    },
  };
}
