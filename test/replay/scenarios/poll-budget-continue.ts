import { readEventsQuery, workflowIdFor } from '../../../workflows/messages';
import { MAX_POLLS_PER_RUN, MAX_WAITING_POLLS } from '../../../workflows/waiting-budget';
import { defineScenario } from '../scenario';

const POLL = '__temporal_workflow_stream_poll';

export default defineScenario({
  name: 'poll-budget-continue',
  description: `a run that answered ${MAX_POLLS_PER_RUN} event polls continues as new after its next turn, so readers can poll again (patch continue-after-poll-budget)`,
  env: { modelFallback: () => ({ kind: 'text' as const, text: 'ack' }) },
  async run(ctx) {
    const handle = ctx.env.client.workflow.getHandle(workflowIdFor(ctx.sessionId));
    await ctx.env.agent.ask(ctx.options(), { text: 'first' });
    const { runId } = await handle.describe();
    // Each poll asks for the last event only: it answers at once, and the history stays small.
    const { nextOffset } = await handle.query(readEventsQuery, { fromOffset: 0 });
    for (let i = 0; i < MAX_POLLS_PER_RUN; i += MAX_WAITING_POLLS) {
      await Promise.all(
        Array.from({ length: Math.min(MAX_WAITING_POLLS, MAX_POLLS_PER_RUN - i) }, () => handle.executeUpdate(POLL, { args: [{ topics: ['events'], from_offset: nextOffset - 1 }] })),
      );
    }
    await ctx.env.agent.ask(ctx.options(), { text: 'second' });
    const first = await ctx.env.client.workflow.getHandle(workflowIdFor(ctx.sessionId), runId).describe();
    ctx.check(first.status.name === 'CONTINUED_AS_NEW', `the first run continued as new (${first.status.name}, ${first.historyLength} events)`);
    ctx.recordRun(runId);
    await ctx.env.agent.end(ctx.sessionId);
  },
});
