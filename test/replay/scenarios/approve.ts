import { workflowIdFor } from '../../../workflows/messages';
import { defineScenario } from '../scenario';
import { pendingCall, scriptWipe } from '../scenario-helpers';

export default defineScenario({
  name: 'approve',
  description: 'a destructive tool waits for confirmation, is approved by a plain decideToolCall signal, then runs',
  env: { probeTools: true },
  async run(ctx) {
    scriptWipe(ctx);
    const { turnId } = await ctx.env.agent.send(ctx.options(), { text: 'wipe my notes' });
    const id = await pendingCall(ctx);
    await ctx.env.client.workflow.getHandle(workflowIdFor(ctx.sessionId)).signal('decideToolCall', { toolCallId: id, approved: true, principal: { tenant: 'acme', user: 'ana' } });
    await ctx.env.agent.waitForTurn(ctx.sessionId, turnId);
    ctx.check(ctx.probe.runs.length === 1, 'the approved tool ran');
  },
});
