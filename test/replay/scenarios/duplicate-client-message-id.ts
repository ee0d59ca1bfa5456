import { defineScenario } from '../scenario';

export default defineScenario({
  name: 'duplicate-client-message-id',
  description: 'the same clientMessageId sent three times runs one turn and answers every send with its result',
  async run(ctx) {
    const { model, agent } = ctx.env;
    model.script([{ respond: { kind: 'text', text: 'once' } }], { lane: ctx.sessionId });
    const a = await agent.send(ctx.options(), { text: 'do it', clientMessageId: 'm-1' });
    await agent.waitForTurn(ctx.sessionId, a.turnId);
    const b = await agent.send(ctx.options(), { text: 'do it', clientMessageId: 'm-1' });
    const c = await agent.sendTo(ctx.sessionId, { text: 'do it', clientMessageId: 'm-1', expectedVersion: 0 });
    ctx.check(b.turnId === a.turnId && c.turnId === a.turnId, 'every send got the first turn');
  },
});
