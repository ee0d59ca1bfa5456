import { WithStartWorkflowOperation } from '@temporalio/client';
import { workflowIdFor } from '../../../workflows/messages';
import { defineScenario } from '../scenario';
import { say } from '../scenario-helpers';

export default defineScenario({
  name: 'archived-message-ids',
  description: 'a message retried (under another update id, as another SDK would) after its session closed is answered as the turn it was by the restored run (patch archived-message-ids)',
  async run(ctx) {
    ctx.env.model.script([{ respond: { kind: 'text', text: 'Booked.' } }], { lane: ctx.sessionId });
    await say(ctx, 'book it', { message: { clientMessageId: 'book-1' }, options: { limits: { idleTimeoutMs: 1_000 } } });
    await ctx.env.client.workflow.getHandle(workflowIdFor(ctx.sessionId)).result();
    const start = new WithStartWorkflowOperation('agentSession', { workflowId: workflowIdFor(ctx.sessionId), taskQueue: ctx.env.taskQueue, args: [{ options: ctx.options() }], workflowIdConflictPolicy: 'USE_EXISTING' });
    const again = (await ctx.env.client.workflow.executeUpdateWithStart('sendMessage', {
      args: [{ text: 'book it', clientMessageId: 'book-1', principal: { tenant: 'acme', user: 'ana' } }],
      updateId: `retry-${ctx.sessionId}`,
      startWorkflowOperation: start,
    })) as { turnId: string };
    ctx.check(again.turnId === 'turn-1', `the retry is the turn it was (${JSON.stringify(again)})`);
  },
});
