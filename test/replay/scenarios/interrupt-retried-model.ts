import { collectEvents, turnCompleted } from '../../support/test-env';
import { defineScenario } from '../scenario';

const ANSWER = 'Hello world, this answer streams slowly word by word';

export default defineScenario({
  name: 'interrupt-retried-model',
  description: "a model call whose first attempt streamed text and failed is interrupted on its second; the partial answer is the second attempt's text alone (patch interrupted-text-newest-attempt)",
  async run(ctx) {
    ctx.env.model.script(
      [
        { respond: { kind: 'truncated_stream', text: 'Hello wor' } },
        { respond: { kind: 'text', text: ANSWER, chunkSize: 5, delayMs: 150 } },
      ],
      { lane: ctx.sessionId },
    );
    const { turnId } = await ctx.env.agent.send(ctx.options(), { text: 'say hello' });
    await collectEvents(ctx.env.agent, ctx.sessionId, (e) => e.type === 'text_delta' && e.attempt === 2);
    await ctx.env.agent.interrupt(ctx.sessionId, 'stop');
    const done = (await collectEvents(ctx.env.agent, ctx.sessionId, turnCompleted(turnId))).at(-1)?.event;
    ctx.check(done?.type === 'turn_completed' && done.outcome === 'interrupted' && done.text.length > 0 && ANSWER.startsWith(done.text), `the partial answer is the second attempt's text (${done?.type === 'turn_completed' ? done.text : '?'})`);
  },
});
