import { defineScenario } from '../scenario';

export default defineScenario({
  name: 'budget-exceeded',
  description: 'each turn reads the day\'s budget (local activity); a spent one ends the turn before its next model call, after its tools ran',
  env: { probeTools: true, budgets: { tenants: { acme: { tokensPerDay: 1 } }, users: {} } },
  async run(ctx) {
    ctx.env.model.script([{ respond: { kind: 'tool_calls', calls: [{ id: `call_note_${ctx.sessionId}`, name: 'local_note', arguments: { text: 'z' } }] } }], { lane: ctx.sessionId });
    const agent = ctx.env.agent;
    const first = await agent.ask(ctx.options(), { text: 'note z' });
    ctx.check(first.turn.outcome === 'budget_exceeded' && first.turn.toolCalls === 1, `the first turn ran its tool, then stopped (got ${first.turn.outcome})`);
    const second = await agent.ask(ctx.options(), { text: 'more?' });
    ctx.check(second.turn.outcome === 'budget_exceeded' && second.turn.modelCalls === 0, 'the second turn called no model');
  },
});
