import { log } from '@temporalio/activity';
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
  const warnedUnpriced = new Set<string>();
  return {
    async checkBudget(input: BudgetCheckInput): Promise<BudgetAllowance | null> {
      if (!store) return null;
      const model = input.model || defaultModel;
      const allowance = await checkBudget({ ...input, model }, budgets, store, pricing);
      if (allowance?.cost !== undefined && !allowance.price && !warnedUnpriced.has(model)) {
        // A session that names its own model: its calls cannot be priced, so only token limits hold for it.
        warnedUnpriced.add(model);
        log.warn(`a cost budget applies to ${input.tenant}/${input.user}, but MODEL_PRICES has no price for the model "${model}": its calls count as costing nothing`, { model });
      }
      return allowance;
    },
    async summarizeUsage(query: UsageQuery): Promise<UsageSummary> {
      if (!store) return { query, currency: 'USD', rows: [], total: { inputTokens: 0, outputTokens: 0, cost: 0, calls: 0 }, unpriced: [] };
      return store.summarize(query);
    },
  };
}
