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
      if (allowance?.cost === undefined || allowance.price) return allowance;
      // A session that names a model of its own without a price: its calls could not be counted against the cost
      // budget, so naming one would escape it. Under a cost budget such a model gets no call at all.
      if (!warnedUnpriced.has(model)) {
        warnedUnpriced.add(model);
        log.warn(`a cost budget applies to ${input.tenant}/${input.user}, but MODEL_PRICES has no price for the model "${model}": its sessions get no model call`, { model });
      }
      return { ...allowance, cost: 0, costFrom: `${allowance.costFrom}; the session's model "${model}" has no price in MODEL_PRICES, so no call of it can be counted against that budget: use a priced model or add its price` };
    },
    async summarizeUsage(query: UsageQuery): Promise<UsageSummary> {
      if (!store) return { query, currency: 'USD', rows: [], total: { inputTokens: 0, outputTokens: 0, cost: 0, calls: 0 }, unpriced: [] };
      return store.summarize(query);
    },
  };
}
