import { defineScenario } from '../scenario';
import { say, scriptWipe } from '../scenario-helpers';

export default defineScenario({
  name: 'confirmation-timeout',
  description: 'nobody decides before confirmationTimeoutMs: the call counts as denied (a timer fires)',
  env: { probeTools: true },
  session: { limits: { confirmationTimeoutMs: 500 } },
  async run(ctx) {
    scriptWipe(ctx, 'Not done.');
    const result = await say(ctx, 'wipe');
    ctx.check(result.text === 'Not done.' && ctx.probe.runs.length === 0, 'the timed-out call did not run');
  },
});
