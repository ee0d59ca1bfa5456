import { workflowIdFor } from '../../../workflows/messages';
import { LIMIT_MAXIMA } from '../../../workflows/session-types';
import { SessionArchiveRepository } from '../../../activities/session-archive';
import { defineScenario } from '../scenario';
import { say } from '../scenario-helpers';

export default defineScenario({
  name: 'limits-past-maxima',
  description: 'a run continuing one whose retention is past its maximum (taken before the maxima) answers and archives with the retention brought down to 100 years (patch session-limits-bounded)',
  async run(ctx) {
    ctx.env.model.script([{ respond: { kind: 'text', text: 'Still here.' } }], { lane: ctx.sessionId });
    const workflowId = workflowIdFor(ctx.sessionId);
    await ctx.env.client.workflow.start('agentSession', {
      workflowId,
      taskQueue: ctx.env.taskQueue,
      args: [{ options: ctx.options({ limits: { retentionMs: 9e15 } }), carried: { status: 'active', version: 0, turnSeq: 0 } }],
    });
    const turn = await say(ctx, 'Still there?');
    ctx.check(turn.outcome === 'completed', 'the turn completed');
    await ctx.env.agent.end(ctx.sessionId, 'archive it');
    await ctx.env.client.workflow.getHandle(workflowId).result();
    const stored = await new SessionArchiveRepository(ctx.env.db).load(ctx.sessionId);
    ctx.check(stored !== null && Date.parse(stored.expiresAt) - Date.parse(stored.archivedAt) === LIMIT_MAXIMA.retentionMs, 'the archive expires 100 years after it was written');
  },
});
