import { eventually } from '../../support/test-env';
import { workflowIdFor } from '../../../workflows/messages';
import { defineScenario } from '../scenario';

export default defineScenario({
  name: 'decide-reused-call-id',
  description: 'the model asks for a destructive call twice under one id; a late signal deciding the first request by its confirmationId is ignored, and the second is denied by its own',
  env: { probeTools: true },
  async run(ctx) {
    const wipe = { respond: { kind: 'tool_calls' as const, calls: [{ id: 'call_0', name: 'local_wipe', arguments: { confirmText: 'all' } }] } };
    ctx.env.model.script([wipe, wipe, { respond: { kind: 'text', text: 'Left them.' } }], { lane: ctx.sessionId });
    const { turnId } = await ctx.env.agent.send(ctx.options(), { text: 'wipe my notes' });
    const heldAfter = (seen: string[]) =>
      eventually(async () => {
        const held = (await ctx.env.agent.getSession(ctx.sessionId)).pendingConfirmations[0];
        return held?.confirmationId && !seen.includes(held.confirmationId) ? held : null;
      }, 'a request held for confirmation');
    const first = await heldAfter([]);
    await ctx.env.agent.deny(ctx.sessionId, 'call_0', 'not now', { confirmationId: first.confirmationId });
    const second = await heldAfter([first.confirmationId!]);
    const principal = { tenant: ctx.options().namespace.tenant, user: ctx.options().namespace.user };
    await ctx.env.client.workflow.getHandle(workflowIdFor(ctx.sessionId)).signal('decideToolCall', { toolCallId: 'call_0', approved: true, confirmationId: first.confirmationId, principal });
    const view = await eventually(async () => {
      const v = await ctx.env.agent.getSession(ctx.sessionId);
      return v.counters.signalsIgnored > 0 ? v : null;
    }, 'the late signal ignored');
    ctx.check(view.pendingConfirmations[0]?.confirmationId === second.confirmationId, 'the second request still waits');
    await ctx.env.agent.deny(ctx.sessionId, 'call_0', 'still no', { confirmationId: second.confirmationId });
    const result = await ctx.env.agent.waitForTurn(ctx.sessionId, turnId);
    ctx.check(result.text === 'Left them.' && ctx.probe.runs.length === 0, 'neither request ran');
  },
});
