import { loadConfig } from '../../workers/config';
import { applyInterruptBudget } from '../../workers/v8-tiering';

/**
 * Applies the worker's V8 interrupt budget (WORKER_V8_INTERRUPT_BUDGET) to a
 * bench process that runs worker code without a worker, and returns it. The
 * model's key is not used by such a process; the rest of the configuration
 * is read as a worker reads it.
 */
export function applyWorkerInterruptBudget(): number {
  const budget = loadConfig({ OPENAI_API_KEY: 'unused', ...process.env }).worker.v8InterruptBudget;
  applyInterruptBudget(budget);
  return budget;
}
