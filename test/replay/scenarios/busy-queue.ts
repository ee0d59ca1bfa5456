import { defineScenario } from '../scenario';

export default defineScenario({
  name: 'busy-queue',
  description: 'busyPolicy "queue": a message sent during a turn waits for it, then runs as the next turn',
  session: { busyPolicy: 'queue' },
  async run(ctx) {
    const { model, agent } = ctx.env;
    model.script(
      [
        { respond: { kind: 'text', text: 'first answer', chunkSize: 2, delayMs: 40 } },
        { match: { lastUserMessage: 'second' }, respond: { kind: 'text', text: 'second answer' } },
      ],
      { lane: ctx.sessionId },
    );
    const first = await agent.send(ctx.options(), { text: 'first' });
    await model.waitForRequests(1, { lane: ctx.sessionId });
    const second = await agent.sendTo(ctx.sessionId, { text: 'second' });
    const a = await agent.waitForTurn(ctx.sessionId, first.turnId);
    const b = await agent.waitForTurn(ctx.sessionId, second.turnId);
    ctx.check(a.outcome === 'completed' && b.text === 'second answer', 'both turns completed in order');
  },
});
