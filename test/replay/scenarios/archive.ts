import { workflowIdFor } from '../../../workflows/messages';
import { defineScenario } from '../scenario';
import { say } from '../scenario-helpers';

export default defineScenario({
  name: 'archive',
  description: 'idle past idleTimeoutMs, the session writes its archive to MongoDB and completes on its own',
  session: { limits: { idleTimeoutMs: 1_000 } },
  endSession: false,
  async run(ctx) {
    ctx.env.model.script([{ respond: { kind: 'text', text: 'Nice to meet you, Ana.' } }], { lane: ctx.sessionId });
    await say(ctx, 'My name is Ana. The deadline is 2026-12-24.');
    const result = await ctx.env.client.workflow.getHandle(workflowIdFor(ctx.sessionId)).result();
    ctx.check((result as { status?: string }).status === 'archived', 'the session archived itself');
  },
});
