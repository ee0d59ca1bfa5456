import { defineScenario } from '../scenario';
import { say } from '../scenario-helpers';

export default defineScenario({
  name: 'tool-failures',
  description: 'a tool timeout and a permission failure go back to the model as tool messages, not as a failed turn',
  env: { probeTools: true },
  async run(ctx) {
    ctx.env.model.script(
      [
        { respond: { kind: 'tool_calls', calls: [{ id: 'call_slow', name: 'local_slow', arguments: {} }, { id: 'call_perm', name: 'local_forbidden', arguments: {} }] } },
        { match: { hasToolResults: true }, respond: { kind: 'text', text: 'Sorry.' } },
      ],
      { lane: ctx.sessionId },
    );
    const result = await say(ctx, 'payroll please');
    ctx.check(result.outcome === 'completed', 'the turn completed');
  },
});
