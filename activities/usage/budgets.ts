import { z } from 'zod';
import type { PriceTable, UsageStore } from './usage-store';

/**
 * Daily budgets from BUDGETS (JSON): per tenant and per user (`tenant/user`),
 * in tokens (input plus output) and/or cost (in the price table's currency),
 * per UTC day. For example:
 * `{"tenants": {"acme": {"tokensPerDay": 2000000}}, "users": {"acme/ana": {"costPerDay": 5}}}`.
 */
const Limit = z.object({ tokensPerDay: z.number().int().min(0).optional(), costPerDay: z.number().min(0).optional() }).strict();
export const Budgets = z
  .object({ tenants: z.record(z.string().min(1), Limit).default({}), users: z.record(z.string().regex(/^[^/]+\/[^/]+$/, 'keys are tenant/user'), Limit).default({}) })
  .strict();
export type Budgets = z.infer<typeof Budgets>;

export function budgetsFromEnv(env: NodeJS.ProcessEnv): Budgets {
  const raw = env.BUDGETS?.trim();
  if (!raw) return { tenants: {}, users: {} };
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    throw new Error('BUDGETS must be JSON such as {"tenants": {"acme": {"tokensPerDay": 2000000}}, "users": {"acme/ana": {"costPerDay": 5}}}');
  }
  const parsed = Budgets.safeParse(json);
  if (!parsed.success) {
    // zod reports a bad record key only as "Invalid key in record"; the reason is in the key's own issues.
    const why = (i: z.core.$ZodIssue) => (i.code === 'invalid_key' ? i.issues.map((k) => k.message).join(', ') : i.message);
    throw new Error(`BUDGETS is invalid: ${parsed.error.issues.slice(0, 5).map((i) => `${i.path.join('.') || '(root)'}: ${why(i)}`).join('; ')}`);
  }
  return parsed.data;
}

/** The budgets that set a cost limit, named as in BUDGETS. */
export function costBudgetNames(budgets: Budgets): string[] {
  return [
    ...Object.entries(budgets.tenants).filter(([, l]) => l.costPerDay !== undefined).map(([t]) => `tenants.${t}`),
    ...Object.entries(budgets.users).filter(([, l]) => l.costPerDay !== undefined).map(([u]) => `users.${u}`),
  ];
}

/**
 * A cost budget is only a limit if the model's calls have a price: without one
 * they cost nothing and the budget never stops a turn. Refused at worker start
 * for the configured model, naming both settings.
 */
export function checkCostBudgetsPriced(budgets: Budgets, prices: PriceTable, model: string): void {
  const named = costBudgetNames(budgets);
  if (named.length === 0 || prices[model]) return;
  throw new Error(
    `BUDGETS sets a cost limit (costPerDay in ${named.slice(0, 3).join(', ')}${named.length > 3 ? ', ...' : ''}) but MODEL_PRICES has no price for the model "${model}", so its calls would cost nothing and the limit would never stop a turn: add the model to MODEL_PRICES, or limit tokens (tokensPerDay) instead`,
  );
}

export interface BudgetCheckInput {
  tenant: string;
  user: string;
  model: string;
}

/** What a turn may still spend today; absent when no budget applies. */
export interface BudgetAllowance {
  /** Tokens left under the tightest token budget (tenant or user). */
  tokens?: number;
  /** Cost left under the tightest cost budget. */
  cost?: number;
  /** Which budget each figure comes from, for the message when it runs out. */
  tokensFrom?: string;
  costFrom?: string;
  /** The model's prices, so the workflow can price its own calls. */
  price?: { inputPerMillion: number; outputPerMillion: number };
  currency: string;
}

export async function checkBudget(input: BudgetCheckInput, budgets: Budgets, store: UsageStore, pricing: { prices: PriceTable; currency: string }): Promise<BudgetAllowance | null> {
  const scopes = [
    { name: `tenant ${input.tenant}`, limit: budgets.tenants[input.tenant], user: undefined },
    { name: `user ${input.tenant}/${input.user}`, limit: budgets.users[`${input.tenant}/${input.user}`], user: input.user },
  ].filter((s) => s.limit && (s.limit.tokensPerDay !== undefined || s.limit.costPerDay !== undefined));
  if (scopes.length === 0) return null;
  const out: BudgetAllowance = { currency: pricing.currency, ...(pricing.prices[input.model] ? { price: pricing.prices[input.model] } : {}) };
  for (const scope of scopes) {
    const used = await store.summarize({ tenant: input.tenant, ...(scope.user ? { user: scope.user } : {}), days: 1 });
    const tokensUsed = used.total.inputTokens + used.total.outputTokens;
    if (scope.limit!.tokensPerDay !== undefined) {
      const left = scope.limit!.tokensPerDay - tokensUsed;
      if (out.tokens === undefined || left < out.tokens) {
        out.tokens = left;
        out.tokensFrom = `${scope.name}: ${scope.limit!.tokensPerDay} tokens a day`;
      }
    }
    if (scope.limit!.costPerDay !== undefined) {
      const left = scope.limit!.costPerDay - used.total.cost;
      if (out.cost === undefined || left < out.cost) {
        out.cost = left;
        out.costFrom = `${scope.name}: ${scope.limit!.costPerDay} ${pricing.currency} a day`;
      }
    }
  }
  return out;
}
