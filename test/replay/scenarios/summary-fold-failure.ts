import { failedFold } from '../../support/scripted-summarizer';
import { eventually } from '../../support/test-env';
import { defineScenario } from '../scenario';
import { say } from '../scenario-helpers';

export default defineScenario({
  name: 'summary-fold-failure',
  description: 'the summarizer answers invalid JSON on every attempt: the fold fails, turns stay raw, an error event says so',
  session: { limits: { windowMaxTurns: 1, foldBatchTurns: 1 } },
  async run(ctx) {
    ctx.env.model.script(
      [
        { respond: { kind: 'text', text: 'Option list: 1. red 2. blue' } },
        { respond: { kind: 'text', text: 'second answer' } },
        failedFold,
      ],
      { lane: ctx.sessionId },
    );
    await say(ctx, 'first');
    await say(ctx, 'second');
    await eventually(async () => (await ctx.env.agent.getSession(ctx.sessionId)).counters.summaryFailures === 1, 'the failed fold', 30_000);
  },
});
