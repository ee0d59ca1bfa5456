import { SUMMARIZER_MARKER } from '../../../activities/summarize-activity';
import { scriptedSummary } from '../../support/scripted-summarizer';
import { eventually } from '../../support/test-env';
import { defineScenario } from '../scenario';
import { say } from '../scenario-helpers';

export default defineScenario({
  name: 'summary-fold',
  description: 'a turn leaving the window is folded into the summary by the summarize activity',
  session: { limits: { windowMaxTurns: 1, foldBatchTurns: 1 } },
  async run(ctx) {
    ctx.env.model.script(
      [
        { respond: { kind: 'text', text: 'Here are three hotels in Lyon:\n1. Hotel Azur\n2. Le Parc\n3. Maison Rouge' } },
        { respond: { kind: 'text', text: 'Noted.' } },
        { match: { systemIncludes: SUMMARIZER_MARKER }, respond: scriptedSummary },
      ],
      { lane: ctx.sessionId },
    );
    await say(ctx, 'Suggest hotels in Lyon');
    await say(ctx, 'ok');
    await eventually(async () => (await ctx.env.agent.getSession(ctx.sessionId)).counters.summariesFolded === 1, 'the fold');
  },
});
