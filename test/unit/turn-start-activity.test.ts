import { ApplicationFailure } from '@temporalio/common';
import { createTurnStartActivity } from '../../activities/turn-start-activity';
import type { GetToolCatalogInput } from '../../activities/activity-types';
import type { BudgetAllowance, BudgetCheckInput } from '../../activities/usage/budgets';
import type { ToolCatalog } from '../../workflows/tool-spec';

const CATALOG: ToolCatalog = { version: 'v3', digest: 'd1', tools: [] };
const ALLOWANCE: BudgetAllowance = { tokens: 10, tokensFrom: 'tenant acme', currency: 'USD' };
const catalogInput: GetToolCatalogInput = { sessionId: 's1', namespace: { tenant: 'acme', user: 'ana' } };
const budgetInput: BudgetCheckInput = { tenant: 'acme', user: 'ana', model: 'm' };

/** Reads that note when each started and answered; the catalog's answer is held until `releaseCatalog()`. */
function heldReads() {
  const log: string[] = [];
  let releaseCatalog: () => void = () => undefined;
  return {
    log,
    releaseCatalog: () => releaseCatalog(),
    reads: {
      getToolCatalog(input: GetToolCatalogInput) {
        log.push(`catalog ${input.sessionId}`);
        return new Promise<ToolCatalog>((resolve) => {
          releaseCatalog = () => {
            log.push('catalog answered');
            resolve(CATALOG);
          };
        });
      },
      async checkBudget(input: BudgetCheckInput) {
        log.push(`budget ${input.tenant}/${input.user}`);
        return ALLOWANCE;
      },
    },
  };
}

describe('readTurnStart', () => {
  it('reads the catalog and the budget side by side and returns both', async () => {
    const held = heldReads();
    const pending = createTurnStartActivity(held.reads).readTurnStart({ catalog: catalogInput, budget: budgetInput });
    await new Promise((resolve) => setImmediate(resolve));
    // The budget read started while the catalog's answer was still held: one after the other, it would not have.
    expect(held.log).toEqual(['catalog s1', 'budget acme/ana']);
    held.releaseCatalog();
    await expect(pending).resolves.toEqual({ catalog: CATALOG, allowance: ALLOWANCE });
    expect(held.log.at(-1)).toBe('catalog answered');
  });

  it('reads no budget when none is asked for: the allowance is null', async () => {
    const held = heldReads();
    const pending = createTurnStartActivity(held.reads).readTurnStart({ catalog: catalogInput });
    held.releaseCatalog();
    await expect(pending).resolves.toEqual({ catalog: CATALOG, allowance: null });
    expect(held.log).toEqual(['catalog s1', 'catalog answered']);
  });

  it("names the read that failed, and keeps its failure's type, details, retry delay and whether it may be retried", async () => {
    const failing = (err: unknown) => ({
      getToolCatalog: async () => CATALOG,
      checkBudget: async (): Promise<BudgetAllowance | null> => {
        throw err;
      },
    });
    const down = createTurnStartActivity(failing(new Error('connect ECONNREFUSED 127.0.0.1:27017'))).readTurnStart({ catalog: catalogInput, budget: budgetInput });
    await expect(down).rejects.toMatchObject({ message: "the day's budget: connect ECONNREFUSED 127.0.0.1:27017", type: 'Error', nonRetryable: false });
    const refused = createTurnStartActivity(failing(ApplicationFailure.create({ message: 'bad model name', type: 'ConfigInvalid', nonRetryable: true, details: [{ field: 'model' }] }))).readTurnStart({ catalog: catalogInput, budget: budgetInput });
    await expect(refused).rejects.toMatchObject({ message: "the day's budget: bad model name", type: 'ConfigInvalid', nonRetryable: true, details: [{ field: 'model' }] });
    const later = createTurnStartActivity(failing(ApplicationFailure.create({ message: 'rate limited', nextRetryDelay: '5 seconds' }))).readTurnStart({ catalog: catalogInput, budget: budgetInput });
    await expect(later).rejects.toMatchObject({ message: "the day's budget: rate limited", nextRetryDelay: '5 seconds', nonRetryable: false });
    const noCatalog = createTurnStartActivity({
      getToolCatalog: async () => {
        throw ApplicationFailure.retryable('the MCP servers are resyncing', 'CatalogUnavailable');
      },
      checkBudget: async () => ALLOWANCE,
    }).readTurnStart({ catalog: catalogInput, budget: budgetInput });
    await expect(noCatalog).rejects.toMatchObject({ message: 'the tool catalog: the MCP servers are resyncing', type: 'CatalogUnavailable', nonRetryable: false });
  });
});
