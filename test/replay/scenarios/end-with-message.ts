import { workflowIdFor } from '../../../workflows/messages';
import { defineScenario } from '../scenario';
import { say } from '../scenario-helpers';

export default defineScenario({
  name: 'end-with-message',
  description: 'an end request and a message reach the session in one workflow task: the message runs first (patch message-arriving-before-close), then the session archives',
  endSession: false,
  async run(ctx) {
    ctx.env.model.script(
      [
        { respond: { kind: 'text', text: 'first answer' } },
        { respond: { kind: 'text', text: 'last answer' } },
      ],
      { lane: ctx.sessionId },
    );
    await say(ctx, 'hello');
    // With no worker, both wait on the server and reach the next worker together.
    await ctx.env.worker.shutdown();
    await ctx.env.agent.end(ctx.sessionId, 'user left');
    const sending = ctx.env.agent.send(ctx.options(), { text: 'one more thing' });
    await new Promise((r) => setTimeout(r, 1_000));
    ctx.env.worker = await ctx.env.startWorker();
    const { turnId } = await sending;
    const turn = await ctx.env.agent.waitForTurn(ctx.sessionId, turnId);
    ctx.check(turn.outcome === 'completed' && turn.text === 'last answer', `the message ran before the session closed (got ${JSON.stringify(turn)})`);
    const result = await ctx.env.client.workflow.getHandle(workflowIdFor(ctx.sessionId)).result();
    ctx.check((result as { status?: string }).status === 'archived', 'the session archived after it');
  },
});
