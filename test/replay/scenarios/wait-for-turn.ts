import { defineScenario } from '../scenario';

export default defineScenario({
  name: 'wait-for-turn',
  description: 'ask() (sendMessage with waitForTurn) answers with the finished turn; a separate waitForTurn update does too',
  async run(ctx) {
    const { model, agent } = ctx.env;
    model.script([{ respond: { kind: 'text', text: 'done in one go' } }, { respond: { kind: 'text', text: 'and again' } }], { lane: ctx.sessionId });
    const asked = await agent.ask(ctx.options(), { text: 'go', clientMessageId: 'ask-1' });
    ctx.check(asked.turn.text === 'done in one go', 'ask() returned the turn');
    const again = await agent.ask(ctx.options(), { text: 'go', clientMessageId: 'ask-1' });
    ctx.check(again.turnId === asked.turnId, 'a repeated ask() returned the same turn');
    const sent = await agent.sendTo(ctx.sessionId, { text: 'once more' });
    const waited = await agent.waitForTurn(ctx.sessionId, sent.turnId);
    ctx.check(waited.text === 'and again', 'waitForTurn returned the turn');
  },
});
