import { workflowIdFor } from '../../../workflows/messages';
import { defineScenario } from '../scenario';
import { say } from '../scenario-helpers';

export default defineScenario({
  name: 'carried-null',
  description: 'a run started directly with carried null (another SDK leaving the field empty) restores the archive like a fresh start (patch carried-state-checked)',
  async run(ctx) {
    ctx.env.model.script(
      [
        { respond: { kind: 'text', text: 'Nice to meet you, Ana.' } },
        { match: { lastUserMessage: 'What is my name?' }, respond: { kind: 'text', text: 'Ana.' } },
      ],
      { lane: ctx.sessionId },
    );
    await say(ctx, 'My name is Ana.');
    await ctx.env.agent.end(ctx.sessionId, 'archive it');
    const workflowId = workflowIdFor(ctx.sessionId);
    await ctx.env.client.workflow.getHandle(workflowId).result();
    await ctx.env.client.workflow.start('agentSession', { workflowId, taskQueue: ctx.env.taskQueue, args: [{ options: ctx.options(), carried: null }] });
    const sent = await ctx.env.agent.send(ctx.options(), { text: 'What is my name?', expectedVersion: 1 });
    ctx.check(sent.turnId === 'turn-2' && sent.version === 2, 'the run started with carried null restored the archive');
    await ctx.env.agent.waitForTurn(ctx.sessionId, sent.turnId);
  },
});
