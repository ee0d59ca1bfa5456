import { workflowIdFor } from '../../../workflows/messages';
import { collectEvents } from '../../support/test-env';
import { defineScenario } from '../scenario';
import { say } from '../scenario-helpers';

export default defineScenario({
  name: 'end-session',
  description: 'endSession archives and completes the session while a client is long-polling its events',
  async run(ctx) {
    ctx.env.model.script([{ respond: { kind: 'text', text: 'hi' } }], { lane: ctx.sessionId });
    await say(ctx, 'hello');
    const reading = collectEvents(ctx.env.agent, ctx.sessionId, () => false, { timeoutMs: 20_000 }).catch((err: unknown) => err);
    await new Promise((r) => setTimeout(r, 500));
    await ctx.env.agent.end(ctx.sessionId, 'user closed the chat');
    await ctx.env.client.workflow.getHandle(workflowIdFor(ctx.sessionId)).result();
    ctx.check(Array.isArray(await reading), 'the reader ended with the session');
  },
});
