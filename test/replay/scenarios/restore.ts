import { workflowIdFor } from '../../../workflows/messages';
import { defineScenario } from '../scenario';
import { say } from '../scenario-helpers';

export default defineScenario({
  name: 'restore',
  description: 'a message to an archived session starts a new run that loads the archive and continues without a seam',
  async run(ctx) {
    ctx.env.model.script(
      [
        { respond: { kind: 'text', text: 'Nice to meet you, Ana.' } },
        { match: { lastUserMessage: 'When is my deadline?' }, respond: { kind: 'text', text: 'December 24th, 2026.' } },
      ],
      { lane: ctx.sessionId },
    );
    await say(ctx, 'My name is Ana. The deadline is 2026-12-24.', { options: { limits: { idleTimeoutMs: 1_000 } } });
    await ctx.env.client.workflow.getHandle(workflowIdFor(ctx.sessionId)).result();
    const sent = await ctx.env.agent.send(ctx.options(), { text: 'When is my deadline?', expectedVersion: 1 });
    ctx.check(sent.turnId === 'turn-2' && sent.version === 2, 'the restored run continues the numbering');
    await ctx.env.agent.waitForTurn(ctx.sessionId, sent.turnId);
  },
});
