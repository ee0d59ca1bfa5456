import { longMessage, UNFOLDED_CAP_LIMITS, unfoldedCapScript } from '../../support/scripted-summarizer';
import { eventually } from '../../support/test-env';
import { defineScenario } from '../scenario';
import { say } from '../scenario-helpers';

export default defineScenario({
  name: 'summary-unfolded-cap',
  description: 'folds keep failing and the turns waiting for one pass the window budget: the oldest become summary notes (patch unfolded-cap)',
  session: { limits: UNFOLDED_CAP_LIMITS },
  async run(ctx) {
    ctx.env.model.script(unfoldedCapScript(), { lane: ctx.sessionId });
    for (let n = 1; n <= 5; n++) await say(ctx, longMessage(n));
    await eventually(async () => (await ctx.env.agent.getSession(ctx.sessionId)).counters.summariesFolded === 1, 'the fold after turn 5', 30_000);
  },
});
