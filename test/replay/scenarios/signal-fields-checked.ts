import { workflowIdFor } from '../../../workflows/messages';
import { defineScenario } from '../scenario';
import { say } from '../scenario-helpers';

const ANA = { tenant: 'acme', user: 'ana' };

export default defineScenario({
  name: 'signal-fields-checked',
  description: 'signals as other SDKs send them: an interrupt with a field the session does not know is ignored and counted, then an endSession with null in its optional fields is obeyed (patch signal-fields-checked)',
  endSession: false,
  async run(ctx) {
    ctx.env.model.script([{ respond: { kind: 'text', text: 'Hello.' } }], { lane: ctx.sessionId });
    await say(ctx, 'hi');
    const handle = ctx.env.client.workflow.getHandle(workflowIdFor(ctx.sessionId));
    await handle.signal('interrupt', { reason: 'stop', principal: ANA, urgent: true });
    await handle.signal('endSession', { reason: null, principal: { ...ANA, roles: null } });
    const result = (await handle.result()) as { status?: string };
    ctx.check(result.status === 'archived', `the session closed on the endSession with nulls (${JSON.stringify(result)})`);
  },
});
