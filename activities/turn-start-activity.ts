import { ApplicationFailure } from '@temporalio/common';
import type { ToolCatalog } from '../workflows/tool-spec';
import type { GetToolCatalogInput } from './activity-types';
import type { BudgetAllowance, BudgetCheckInput } from './usage/budgets';

/*
 * The two reads a turn starts with, in one local activity. Apart, each was a
 * local activity of its own: a task from the SDK core to the worker and
 * back, and an activation of the workflow for its result, about 1 ms of a
 * turn where both reads answer from memory (docs/performance.md). Here they
 * run side by side in the worker, so a slow budget query (MongoDB) does not
 * hold the catalog's read, and the workflow gets both in one result.
 */

export interface ReadTurnStartInput {
  catalog: GetToolCatalogInput;
  /** What the day's budget is read for; absent, no budget is read (`allowance` is null). */
  budget?: BudgetCheckInput;
}

export interface TurnStartReads {
  catalog: ToolCatalog;
  /** What the tenant and user may still spend today; null when no budget applies. */
  allowance: BudgetAllowance | null;
}

interface Reads {
  getToolCatalog(input: GetToolCatalogInput): Promise<ToolCatalog>;
  checkBudget(input: BudgetCheckInput): Promise<BudgetAllowance | null>;
}

/**
 * A read's failure, its message starting with what was read, so the turn's
 * error names it. Retryable unless the read's own failure said otherwise.
 */
function named(what: string, err: unknown): ApplicationFailure {
  const message = `${what}: ${err instanceof Error ? err.message : String(err)}`;
  if (err instanceof ApplicationFailure) {
    return ApplicationFailure.create({
      message,
      type: err.type ?? undefined,
      nonRetryable: err.nonRetryable ?? false,
      details: err.details ?? undefined,
      nextRetryDelay: err.nextRetryDelay ?? undefined,
      category: err.category ?? undefined,
      cause: err,
    });
  }
  return ApplicationFailure.create({ message, type: err instanceof Error ? err.name : 'Error', ...(err instanceof Error ? { cause: err } : {}) });
}

export function createTurnStartActivity(reads: Reads) {
  return {
    async readTurnStart(input: ReadTurnStartInput): Promise<TurnStartReads> {
      const [catalog, allowance] = await Promise.all([
        reads.getToolCatalog(input.catalog).catch((err: unknown) => {
          throw named('the tool catalog', err);
        }),
        input.budget
          ? reads.checkBudget(input.budget).catch((err: unknown) => {
              throw named("the day's budget", err);
            })
          : null,
      ]);
      return { catalog, allowance };
    },
  };
}
