import { ApplicationFailure } from '@temporalio/common';
import { defineScenario } from '../scenario';
import { activityFault } from '../scenario-helpers';

/** Fails every attempt of the first turn's budget and catalog read (readTurnStart), as an unreachable MongoDB would; later turns read as usual. */
let failures = 0;

export default defineScenario({
  name: 'turn-read-failure',
  description: 'the turn-start read (budget and catalog) fails after its retries: that turn ends as failed with a TurnReadFailed error, the run goes on and the next turn completes',
  env: {
    activityInterceptors: [
      activityFault(({ activityType, attempt }) => {
        if (activityType !== 'readTurnStart' || (attempt === 1 && failures > 0)) return undefined;
        if (attempt >= 3) failures += 1;
        return ApplicationFailure.retryable('database down', 'MongoServerSelectionError');
      }),
    ],
  },
  async run(ctx) {
    ctx.env.model.script([{ respond: { kind: 'text', text: 'Back.' } }], { lane: ctx.sessionId });
    const agent = ctx.env.agent;
    const first = await agent.ask(ctx.options(), { text: 'hello' });
    ctx.check(first.turn.outcome === 'failed' && first.turn.error?.startsWith('TurnReadFailed') === true, `the first turn failed on its budget read (got ${first.turn.outcome}: ${first.turn.error})`);
    const second = await agent.ask(ctx.options(), { text: 'hello again' });
    ctx.check(second.turn.outcome === 'completed' && second.turn.text === 'Back.', `the second turn completed in the same session (got ${second.turn.outcome})`);
  },
});
