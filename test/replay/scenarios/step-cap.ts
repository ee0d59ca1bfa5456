import { defineScenario } from '../scenario';
import { say } from '../scenario-helpers';

export default defineScenario({
  name: 'step-cap',
  description: 'a model that keeps calling tools is stopped at maxSteps model calls',
  env: { probeTools: true },
  session: { limits: { maxSteps: 2 } },
  async run(ctx) {
    ctx.env.model.script([{ times: 2, respond: { kind: 'tool_calls', text: 'Still looking.', calls: [{ name: 'local_sleepy', arguments: { ms: 1, label: 'loop' } }] } }], { lane: ctx.sessionId });
    const result = await say(ctx, 'loop forever');
    ctx.check(result.outcome === 'step_limit', 'the turn hit the step limit');
  },
});
