import { ApplicationFailure } from '@temporalio/common';
import { defineScenario } from '../scenario';
import { activityFault } from '../scenario-helpers';
import { workflowIdFor } from '../../../workflows/messages';

export default defineScenario({
  name: 'search-attributes-refused',
  description: 'a session another client started without search attributes cannot read which the namespace registered (the operator call refused): it runs without setting its own',
  env: {
    activityInterceptors: [
      activityFault(({ activityType }) =>
        activityType === 'describeSearchAttributes' ? ApplicationFailure.nonRetryable('PERMISSION_DENIED: ListSearchAttributes is not allowed for this identity', 'PermissionDenied') : undefined,
      ),
    ],
  },
  async run(ctx) {
    ctx.env.model.script([{ respond: { kind: 'text', text: 'hello' } }], { lane: ctx.sessionId });
    // As another SDK or the CLI would: a plain start, no search attributes.
    await ctx.env.client.workflow.start('agentSession', { workflowId: workflowIdFor(ctx.sessionId), taskQueue: ctx.env.taskQueue, args: [{ options: ctx.options() }] });
    const { turnId } = await ctx.env.agent.sendTo(ctx.sessionId, { text: 'hi' });
    const turn = await ctx.env.agent.waitForTurn(ctx.sessionId, turnId);
    ctx.check(turn.outcome === 'completed', `the turn completed (got ${turn.outcome})`);
  },
});
