import { SessionPendingApprovalsKey, SessionStatusKey } from '../../../workflows/search-attributes';
import { workflowIdFor } from '../../../workflows/messages';
import { defineScenario } from '../scenario';
import { pendingCall, scriptWipe } from '../scenario-helpers';
import { turnsUntilContinuedAsNew } from './continue-as-new';

export default [
  defineScenario({
    name: 'awaiting-approval-status',
    description: 'behind status-shows-approvals and pending-approvals-attribute: SessionStatus is awaiting_approval (SessionPendingApprovals and memo pendingApprovals 1) while a call waits for a person, active (0) again once approved',
    env: { probeTools: true },
    async run(ctx) {
      const handle = ctx.env.client.workflow.getHandle(workflowIdFor(ctx.sessionId));
      scriptWipe(ctx);
      const { turnId } = await ctx.env.agent.send(ctx.options(), { text: 'wipe my notes' });
      const id = await pendingCall(ctx);
      const waiting = await handle.describe();
      ctx.check(waiting.typedSearchAttributes.get(SessionStatusKey) === 'awaiting_approval', `SessionStatus while waiting: ${waiting.typedSearchAttributes.get(SessionStatusKey)}`);
      ctx.check((waiting.memo as { pendingApprovals?: number } | undefined)?.pendingApprovals === 1, 'the memo counts one pending approval');
      ctx.check(waiting.typedSearchAttributes.get(SessionPendingApprovalsKey) === 1, `SessionPendingApprovals while waiting: ${waiting.typedSearchAttributes.get(SessionPendingApprovalsKey)}`);
      await ctx.env.agent.approve(ctx.sessionId, id);
      await ctx.env.agent.waitForTurn(ctx.sessionId, turnId);
      const after = await handle.describe();
      ctx.check(after.typedSearchAttributes.get(SessionStatusKey) === 'active', `SessionStatus after the decision: ${after.typedSearchAttributes.get(SessionStatusKey)}`);
      ctx.check(after.typedSearchAttributes.get(SessionPendingApprovalsKey) === 0, `SessionPendingApprovals after the decision: ${after.typedSearchAttributes.get(SessionPendingApprovalsKey)}`);
    },
  }),
  defineScenario({
    name: 'continued-status',
    description: 'behind status-shows-approvals: a run closed by continue-as-new shows SessionStatus continued, and the next run starts with the session\'s real status',
    session: { limits: { maxHistoryEvents: 200 } },
    env: { modelFallback: () => ({ kind: 'text' as const, text: 'ack' }) },
    async run(ctx) {
      const { firstRunId, nextRunId } = await turnsUntilContinuedAsNew(ctx);
      const client = ctx.env.client.workflow;
      const first = await client.getHandle(workflowIdFor(ctx.sessionId), firstRunId).describe();
      const next = await client.getHandle(workflowIdFor(ctx.sessionId), nextRunId).describe();
      ctx.check(first.typedSearchAttributes.get(SessionStatusKey) === 'continued', `the closed run shows ${first.typedSearchAttributes.get(SessionStatusKey)}`);
      ctx.check(next.typedSearchAttributes.get(SessionStatusKey) === 'active', `the next run shows ${next.typedSearchAttributes.get(SessionStatusKey)}`);
      ctx.recordRun(firstRunId);
      await ctx.env.agent.end(ctx.sessionId);
    },
  }),
];
