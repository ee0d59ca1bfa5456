import { eventually } from '../../support/test-env';
import { defineScenario } from '../scenario';

export default defineScenario({
  name: 'interrupt-tool',
  description: 'an interrupt signal cancels a running tool activity, which observes the abort',
  env: { probeTools: true },
  async run(ctx) {
    ctx.env.model.script([{ respond: { kind: 'tool_calls', calls: [{ name: 'local_sleepy', arguments: { ms: 20_000, label: 'long' } }] } }], { lane: ctx.sessionId });
    const { turnId } = await ctx.env.agent.send(ctx.options(), { text: 'take your time' });
    await eventually(() => ctx.probe.runs.length === 1, 'the tool to start');
    await ctx.env.agent.interrupt(ctx.sessionId, 'stop');
    const result = await ctx.env.agent.waitForTurn(ctx.sessionId, turnId);
    ctx.check(result.outcome === 'interrupted' && ctx.probe.runs[0]?.aborted === true, 'the tool was aborted');
  },
});
