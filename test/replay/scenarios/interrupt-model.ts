import { collectEvents, turnCompleted } from '../../support/test-env';
import { defineScenario } from '../scenario';

export default defineScenario({
  name: 'interrupt-model',
  description: 'an interrupt signal cancels a streaming model call; the partial answer is kept, marked interrupted',
  async run(ctx) {
    ctx.env.model.script([{ respond: { kind: 'text', text: 'This is a long answer that streams slowly word by word', chunkSize: 5, delayMs: 150 } }], { lane: ctx.sessionId });
    const { turnId } = await ctx.env.agent.send(ctx.options(), { text: 'tell me a story' });
    await collectEvents(ctx.env.agent, ctx.sessionId, (e) => e.type === 'text_delta');
    await ctx.env.agent.interrupt(ctx.sessionId, 'user pressed stop');
    const events = await collectEvents(ctx.env.agent, ctx.sessionId, turnCompleted(turnId));
    const done = events.at(-1)?.event;
    ctx.check(done?.type === 'turn_completed' && done.outcome === 'interrupted', 'the turn was interrupted');
  },
});
