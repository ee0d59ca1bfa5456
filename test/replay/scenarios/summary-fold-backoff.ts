import { foldBackoffScript } from '../../support/scripted-summarizer';
import { eventually } from '../../support/test-env';
import { defineScenario } from '../scenario';
import { say } from '../scenario-helpers';

export default defineScenario({
  name: 'summary-fold-backoff',
  description: 'the summarizer fails twice in a row: the fold after the next turn is skipped (patch fold-backoff), the one after that succeeds',
  session: { limits: { windowMaxTurns: 1, foldBatchTurns: 1 } },
  async run(ctx) {
    ctx.env.model.script(foldBackoffScript(), { lane: ctx.sessionId });
    for (const text of ['one', 'two', 'three', 'four', 'five']) await say(ctx, text);
    await eventually(async () => (await ctx.env.agent.getSession(ctx.sessionId)).counters.summariesFolded === 1, 'the fold after turn 5', 30_000);
  },
});
