import { defineScenario } from '../scenario';
import { pendingCall, scriptWipe } from '../scenario-helpers';

export default defineScenario({
  name: 'decide-via-update',
  description: 'approval through the decideToolCall update (the typed client), and a second decision refused by its validator',
  env: { probeTools: true },
  async run(ctx) {
    scriptWipe(ctx);
    const { turnId } = await ctx.env.agent.send(ctx.options(), { text: 'wipe my notes' });
    const id = await pendingCall(ctx);
    await ctx.env.agent.approve(ctx.sessionId, id);
    await ctx.env.agent.waitForTurn(ctx.sessionId, turnId);
    const again = await ctx.env.agent.approve(ctx.sessionId, id).then(() => null, (err: unknown) => err);
    ctx.check(again instanceof Error && /No tool call .* is waiting/.test(again.message), 'a second decision is refused');
    ctx.check(ctx.probe.runs.length === 1, 'the approved tool ran once');
  },
});
