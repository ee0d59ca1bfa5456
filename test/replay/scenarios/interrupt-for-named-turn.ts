import { defineScenario } from '../scenario';

export default defineScenario({
  name: 'interrupt-for-named-turn',
  description: 'an interrupt naming a turn that has ended leaves the running one alone; one naming the running turn stops it (patch interrupt-for-named-turn)',
  async run(ctx) {
    const { model, agent } = ctx.env;
    model.script(
      [
        { respond: { kind: 'text', text: 'The first answer streams slowly to its end.', chunkSize: 8, delayMs: 120 } },
        { match: { lastUserMessage: 'second' }, respond: { kind: 'hang' } },
      ],
      { lane: ctx.sessionId },
    );
    const first = await agent.send(ctx.options(), { text: 'first' });
    await model.waitForRequests(1, { lane: ctx.sessionId });
    // A Stop for a turn that is not the one running (as one that arrives after its turn ended): nothing stops.
    await agent.interrupt(ctx.sessionId, 'late stop', { turnId: 'turn-0' });
    const a = await agent.waitForTurn(ctx.sessionId, first.turnId);
    const second = await agent.sendTo(ctx.sessionId, { text: 'second' });
    await model.waitForRequests(2, { lane: ctx.sessionId });
    await agent.interrupt(ctx.sessionId, 'stop this one', { turnId: second.turnId });
    const b = await agent.waitForTurn(ctx.sessionId, second.turnId);
    ctx.check(a.outcome === 'completed' && b.outcome === 'interrupted', `the late stop left turn 1 alone, the named one stopped turn 2 (${a.outcome}, ${b.outcome})`);
  },
});
