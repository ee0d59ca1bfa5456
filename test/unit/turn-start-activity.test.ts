import { ApplicationFailure } from '@temporalio/common';
import { createTurnStartActivity } from '../../activities/turn-start-activity';
import type { GetToolCatalogInput } from '../../activities/activity-types';
import type { BudgetAllowance, BudgetCheckInput } from '../../activities/usage/budgets';
import type { ToolCatalog } from '../../workflows/tool-spec';

const CATALOG: ToolCatalog = { version: 'v3', digest: 'd1', tools: [] };
const ALLOWANCE: BudgetAllowance = { tokens: 10, tokensFrom: 'tenant acme', currency: 'USD' };
const catalogInput: GetToolCatalogInput = { sessionId: 's1', namespace: { tenant: 'acme', user: 'ana' } };
const budgetInput: BudgetCheckInput = { tenant: 'acme', user: 'ana', model: 'm' };

/** Reads that note when each started and ended, the budget's held until `release()`. */
function heldReads() {
  const log: string[] = [];
  let release: (allowance: BudgetAllowance | null) => void = () => undefined;
  return {
    log,
    release: (allowance: BudgetAllowance | null) => release(allowance),
    reads: {
      async getToolCatalog(input: GetToolCatalogInput) {
        log.push(`catalog ${input.sessionId}`);
        return CATALOG;
      },
      checkBudget(input: BudgetCheckInput) {
        log.push(`budget ${input.tenant}/${input.user}`);
        return new Promise<BudgetAllowance | null>((resolve) => {
          release = (allowance) => {
            log.push('budget answered');
            resolve(allowance);
          };
        });
      },
    },
  };
}

describe('readTurnStart', () => {
  it('reads the catalog and the budget side by side and returns both', async () => {
    const held = heldReads();
    const pending = createTurnStartActivity(held.reads).readTurnStart({ catalog: catalogInput, budget: budgetInput });
    await new Promise((resolve) => setImmediate(resolve));
    // Both reads started before the budget answered.
    expect(held.log).toEqual(['catalog s1', 'budget acme/ana']);
    held.release(ALLOWANCE);
    await expect(pending).resolves.toEqual({ catalog: CATALOG, allowance: ALLOWANCE });
  });

  it('reads no budget when none is asked for: the allowance is null', async () => {
    const held = heldReads();
    await expect(createTurnStartActivity(held.reads).readTurnStart({ catalog: catalogInput })).resolves.toEqual({ catalog: CATALOG, allowance: null });
    expect(held.log).toEqual(['catalog s1']);
  });

  it("names the read that failed, and keeps its failure's type and whether it may be retried", async () => {
    const failing = (err: unknown) => ({
      getToolCatalog: async () => CATALOG,
      checkBudget: async (): Promise<BudgetAllowance | null> => {
        throw err;
      },
    });
    const down = createTurnStartActivity(failing(new Error('connect ECONNREFUSED 127.0.0.1:27017'))).readTurnStart({ catalog: catalogInput, budget: budgetInput });
    await expect(down).rejects.toMatchObject({ message: "the day's budget: connect ECONNREFUSED 127.0.0.1:27017", type: 'Error', nonRetryable: false });
    const refused = createTurnStartActivity(failing(ApplicationFailure.nonRetryable('bad model name', 'ConfigInvalid'))).readTurnStart({ catalog: catalogInput, budget: budgetInput });
    await expect(refused).rejects.toMatchObject({ message: "the day's budget: bad model name", type: 'ConfigInvalid', nonRetryable: true });
    const noCatalog = createTurnStartActivity({
      getToolCatalog: async () => {
        throw ApplicationFailure.retryable('the MCP servers are resyncing', 'CatalogUnavailable');
      },
      checkBudget: async () => ALLOWANCE,
    }).readTurnStart({ catalog: catalogInput, budget: budgetInput });
    await expect(noCatalog).rejects.toMatchObject({ message: 'the tool catalog: the MCP servers are resyncing', type: 'CatalogUnavailable', nonRetryable: false });
  });
});
