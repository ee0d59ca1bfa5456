import { SessionArchiveRepository } from '../../../activities/session-archive';
import { workflowIdFor } from '../../../workflows/messages';
import { defineScenario } from '../scenario';
import { say } from '../scenario-helpers';

export default defineScenario({
  name: 'expired-restore',
  description: 'a message to a session whose archive expired starts a run that keeps its numbering and owner, empty, and archives again',
  async run(ctx) {
    ctx.env.model.script(
      [
        { respond: { kind: 'text', text: 'Noted.' } },
        { respond: { kind: 'text', text: 'Starting over.' } },
      ],
      { lane: ctx.sessionId },
    );
    await say(ctx, 'Remember the blue folder.', { options: { limits: { idleTimeoutMs: 1_000 } } });
    await ctx.env.client.workflow.getHandle(workflowIdFor(ctx.sessionId)).result();
    await ctx.env.db.collection('sessions').updateOne({ _id: ctx.sessionId } as never, { $set: { expiresAt: '2000-01-01T00:00:00.000Z' } });
    const { expired } = await new SessionArchiveRepository(ctx.env.db).expire(new Date());
    ctx.check(expired === 1, 'the archive expired');
    const sent = await ctx.env.agent.send(ctx.options(), { text: 'Hello again.', expectedVersion: 1 });
    ctx.check(sent.turnId === 'turn-2' && sent.version === 2, 'the run continues the numbering of the expired session');
    await ctx.env.agent.waitForTurn(ctx.sessionId, sent.turnId);
  },
});
