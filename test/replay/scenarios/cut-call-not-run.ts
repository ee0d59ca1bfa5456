import { scriptCallCutBeforeArguments } from '../../support/scripted-steps';
import { defineScenario } from '../scenario';
import { say } from '../scenario-helpers';

export default defineScenario({
  name: 'cut-call-not-run',
  description: "an answer cut off (finish_reason length) before its last call's arguments came: the call is refused, not run with {} (patch cut-call-not-run)",
  env: { probeTools: true },
  async run(ctx) {
    scriptCallCutBeforeArguments(ctx.env.model, ctx.sessionId, 'local_slow');
    const turn = await say(ctx, 'go slowly');
    ctx.check(turn.outcome === 'completed' && ctx.probe.runs.length === 0, 'the cut call did not run');
  },
});
