import { defineScenario } from '../scenario';

export default defineScenario({
  name: 'busy-interrupt',
  description: 'busyPolicy "interrupt" (the default): a message sent during a turn cancels it and runs next',
  async run(ctx) {
    const { model, agent } = ctx.env;
    model.script(
      [
        { respond: { kind: 'hang' } },
        { match: { lastUserMessage: 'second' }, respond: { kind: 'text', text: 'second answer' } },
      ],
      { lane: ctx.sessionId },
    );
    const first = await agent.send(ctx.options(), { text: 'first' });
    await model.waitForRequests(1, { lane: ctx.sessionId });
    const second = await agent.sendTo(ctx.sessionId, { text: 'second' });
    const a = await agent.waitForTurn(ctx.sessionId, first.turnId);
    const b = await agent.waitForTurn(ctx.sessionId, second.turnId);
    ctx.check(a.outcome === 'interrupted' && b.text === 'second answer', 'the first turn was interrupted by the second');
  },
});
