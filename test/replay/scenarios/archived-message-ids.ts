import { workflowIdFor } from '../../../workflows/messages';
import { defineScenario } from '../scenario';
import { resendUnderAnotherUpdateId, say } from '../scenario-helpers';

export default defineScenario({
  name: 'archived-message-ids',
  description: 'a message retried (under another update id, as another SDK would) after its session closed is answered as the turn it was by the restored run (patch archived-message-ids)',
  async run(ctx) {
    ctx.env.model.script([{ respond: { kind: 'text', text: 'Booked.' } }], { lane: ctx.sessionId });
    await say(ctx, 'book it', { message: { clientMessageId: 'book-1' }, options: { limits: { idleTimeoutMs: 1_000 } } });
    await ctx.env.client.workflow.getHandle(workflowIdFor(ctx.sessionId)).result();
    const again = await resendUnderAnotherUpdateId(ctx, 'book it', 'book-1');
    ctx.check(again.turnId === 'turn-1', `the retry is the turn it was (${JSON.stringify(again)})`);
  },
});
