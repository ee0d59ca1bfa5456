import { eventually } from '../../support/test-env';
import { defineScenario } from '../scenario';
import { pendingCall } from '../scenario-helpers';

export default defineScenario({
  name: 'interrupt-with-sibling-call',
  description: 'an interrupt while one call of a step waits for confirmation and another runs: the turn ends once the running call has been cancelled (patch tool-calls-settled)',
  env: { probeTools: true },
  async run(ctx) {
    ctx.env.model.script(
      [
        {
          respond: {
            kind: 'tool_calls',
            calls: [
              { id: 'call_wipe', name: 'local_wipe', arguments: { confirmText: 'all' } },
              { id: 'call_sleep', name: 'local_sleepy', arguments: { ms: 20_000, label: 'sibling' } },
            ],
          },
        },
      ],
      { lane: ctx.sessionId },
    );
    const { turnId } = await ctx.env.agent.send(ctx.options(), { text: 'wipe and wait' });
    await pendingCall(ctx);
    await eventually(() => ctx.probe.runs.length === 1, 'the sibling to start');
    await ctx.env.agent.interrupt(ctx.sessionId, 'stop');
    const result = await ctx.env.agent.waitForTurn(ctx.sessionId, turnId);
    ctx.check(result.outcome === 'interrupted' && ctx.probe.runs[0]?.aborted === true, 'the turn ended with the sibling aborted');
  },
});
