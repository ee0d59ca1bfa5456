import { workflowIdFor } from '../../../workflows/messages';
import { defineScenario } from '../scenario';
import { pendingCall, scriptWipe } from '../scenario-helpers';

export default defineScenario({
  name: 'deny',
  description: 'a destructive tool is denied by signal with a reason; the model is told, the tool never runs',
  env: { probeTools: true },
  async run(ctx) {
    scriptWipe(ctx, 'Okay, I left them.');
    const { turnId } = await ctx.env.agent.send(ctx.options(), { text: 'wipe my notes' });
    const id = await pendingCall(ctx);
    await ctx.env.client.workflow.getHandle(workflowIdFor(ctx.sessionId)).signal('decideToolCall', { toolCallId: id, approved: false, reason: 'I changed my mind', principal: { tenant: 'acme', user: 'ana' } });
    const result = await ctx.env.agent.waitForTurn(ctx.sessionId, turnId);
    ctx.check(result.text === 'Okay, I left them.' && ctx.probe.runs.length === 0, 'the denied tool did not run');
  },
});
