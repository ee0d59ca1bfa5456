import { workflowIdFor } from '../../../workflows/messages';
import type { ScenarioContext } from '../scenario';
import { defineScenario } from '../scenario';

/** Sends turns until the session continues as new (maxHistoryEvents is at its minimum, 200); returns the first run's id. */
export async function turnsUntilContinuedAsNew(ctx: ScenarioContext): Promise<{ firstRunId: string; nextRunId: string }> {
  const handle = ctx.env.client.workflow.getHandle(workflowIdFor(ctx.sessionId));
  let firstRunId = '';
  for (let i = 1; i <= 40; i++) {
    await ctx.env.agent.ask(ctx.options(), { text: `message ${i}`, clientMessageId: `m${i}` });
    const { runId } = await handle.describe();
    if (i === 1) firstRunId = runId;
    else if (runId !== firstRunId) return { firstRunId, nextRunId: runId };
  }
  throw new Error('the session did not continue as new within 40 turns');
}

const session = { limits: { maxHistoryEvents: 200 } };
const modelFallback = () => ({ kind: 'text' as const, text: 'ack' });

export default [
  defineScenario({
    name: 'continue-as-new',
    description: 'a run whose history passes maxHistoryEvents continues as new at a turn boundary, carrying compact state',
    session,
    env: { modelFallback },
    async run(ctx) {
      const { firstRunId } = await turnsUntilContinuedAsNew(ctx);
      ctx.recordRun(firstRunId);
      await ctx.env.agent.end(ctx.sessionId);
    },
  }),
  defineScenario({
    name: 'continue-as-new-next-run',
    description: 'the run after continue-as-new: started from carried state (window, counters, dedupe ids, stream), then ended',
    session,
    env: { modelFallback },
    async run(ctx) {
      const { nextRunId } = await turnsUntilContinuedAsNew(ctx);
      ctx.recordRun(nextRunId);
      // A repeated clientMessageId from the first run is still answered from the carried dedupe memory.
      const dup = await ctx.env.agent.send(ctx.options(), { text: 'message 1', clientMessageId: 'm1' });
      ctx.check(dup.version === 1, 'the carried dedupe memory answered');
    },
  }),
];
