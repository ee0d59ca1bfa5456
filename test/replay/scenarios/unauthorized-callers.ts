import { NotAuthorizedError } from '../../../client';
import { workflowIdFor } from '../../../workflows/messages';
import { defineScenario } from '../scenario';
import { pendingCall, scriptWipe } from '../scenario-helpers';

const STRANGER = { tenant: 'other', user: 'mallory' };
const COLLEAGUE = { tenant: 'acme', user: 'bob' };
const APPROVER = { tenant: 'acme', user: 'carol', roles: ['approver' as const] };

export default defineScenario({
  name: 'unauthorized-callers',
  description:
    'behind principal-required: a stranger\'s send and a colleague\'s decide (updates) are refused, a stranger\'s decideToolCall, interrupt and endSession (signals) and one without a principal are ignored and counted; an approver of the tenant then approves',
  env: { probeTools: true },
  async run(ctx) {
    scriptWipe(ctx);
    const { turnId } = await ctx.env.agent.send(ctx.options(), { text: 'wipe my notes' });
    const id = await pendingCall(ctx);
    const handle = ctx.env.client.workflow.getHandle(workflowIdFor(ctx.sessionId));

    const refusedSend = await ctx.env.agent.as(STRANGER).send(ctx.options(), { text: 'hi from outside' }).then(() => null, (err: unknown) => err);
    ctx.check(refusedSend instanceof NotAuthorizedError, `a stranger's send is refused (${String(refusedSend)})`);
    const refusedDecide = await ctx.env.agent.as(COLLEAGUE).approve(ctx.sessionId, id).then(() => null, (err: unknown) => err);
    ctx.check(refusedDecide instanceof NotAuthorizedError, `a colleague without the approver role cannot decide (${String(refusedDecide)})`);

    await handle.signal('decideToolCall', { toolCallId: id, approved: true, principal: STRANGER });
    await handle.signal('decideToolCall', { toolCallId: id, approved: true });
    await handle.signal('interrupt', { reason: 'stop', principal: STRANGER });
    await handle.signal('endSession', { reason: 'bye', principal: COLLEAGUE });
    const waiting = await ctx.env.agent.getSession(ctx.sessionId);
    ctx.check(waiting.pendingConfirmations.length === 1 && ctx.probe.runs.length === 0, 'the call still waits for a decision: none of the signals counted');
    ctx.check(waiting.counters.signalsUnauthorized + waiting.counters.signalsIgnored >= 4, `the four signals were counted (${waiting.counters.signalsUnauthorized} unauthorized, ${waiting.counters.signalsIgnored} ignored)`);

    await ctx.env.agent.as(APPROVER).approve(ctx.sessionId, id);
    const turn = await ctx.env.agent.waitForTurn(ctx.sessionId, turnId);
    ctx.check(turn.outcome === 'completed' && ctx.probe.runs.length === 1, 'the approver\'s decision ran the tool once');
  },
});
