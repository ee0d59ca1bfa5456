import { collectEvents, turnCompleted } from '../../support/test-env';
import { defineScenario } from '../scenario';

export default defineScenario({
  name: 'plain-turn',
  description: 'one streamed text answer, read through the event stream, then endSession',
  async run(ctx) {
    ctx.env.model.script([{ respond: { kind: 'text', text: 'Hello Ana, how can I help today?', chunkSize: 5, delayMs: 5 } }], { lane: ctx.sessionId });
    const { turnId } = await ctx.env.agent.send(ctx.options(), { text: 'hi' });
    const events = await collectEvents(ctx.env.agent, ctx.sessionId, turnCompleted(turnId));
    ctx.check(events.at(-1)?.event.type === 'turn_completed', 'the turn completed');
  },
});
