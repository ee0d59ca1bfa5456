import { scriptTwoWipes } from '../../support/scripted-steps';
import { eventually } from '../../support/test-env';
import { defineScenario } from '../scenario';

export default defineScenario({
  name: 'two-confirmations',
  description: 'two calls of a step wait for confirmation; approving the first leaves the session awaiting confirmation until the second is decided (patch running-tools-after-last-decision)',
  env: { probeTools: true },
  async run(ctx) {
    scriptTwoWipes(ctx.env.model, ctx.sessionId);
    const { turnId } = await ctx.env.agent.send(ctx.options(), { text: 'wipe twice' });
    await eventually(async () => ((await ctx.env.agent.getSession(ctx.sessionId)).pendingConfirmations.length === 2 ? true : null), 'both calls to wait');
    await ctx.env.agent.approve(ctx.sessionId, 'call_wipe_a');
    const view = await eventually(async () => {
      const v = await ctx.env.agent.getSession(ctx.sessionId);
      return v.pendingConfirmations.length === 1 ? v : null;
    }, 'one call decided');
    ctx.check(view.activity === 'awaiting_confirmation', `the session awaits the second decision (${view.activity})`);
    await ctx.env.agent.approve(ctx.sessionId, 'call_wipe_b');
    const result = await ctx.env.agent.waitForTurn(ctx.sessionId, turnId);
    ctx.check(result.outcome === 'completed' && ctx.probe.runs.length === 2, 'both calls ran');
  },
});
