import { answerInputSignal, workflowIdFor } from '../../../workflows/messages';
import type { AgentEvent } from '../../../workflows/events';
import { collectEvents, turnCompleted } from '../../support/test-env';
import { scriptCall } from '../../support/scripted-steps';
import { defineScenario, type ScenarioContext } from '../scenario';

/** Starts confirm_export (which elicits) and returns the question once the session holds it. */
export async function ask(ctx: ScenarioContext, text: string) {
  scriptCall(ctx.env.model, ctx.sessionId, 'mcp_report_confirm_export', { report: 'revenue' }, 'Handled.');
  const { turnId } = await ctx.env.agent.send(ctx.options(), { text });
  const events = await collectEvents(ctx.env.agent, ctx.sessionId, (e) => e.type === 'input_required' && e.input.turnId === turnId);
  return { turnId, input: (events.at(-1)!.event as Extract<AgentEvent, { type: 'input_required' }>).input };
}

export default [
  defineScenario({
    name: 'mcp-elicitation',
    description: 'an MCP server elicits mid-call (a real stdio server): input_required, a refused answer off the schema, an accepted answer by update, the call resumed',
    env: { mcp: true },
    async run(ctx) {
      const { turnId, input } = await ask(ctx, 'export the revenue report');
      const refused = await ctx.env.agent.answerInput(ctx.sessionId, { inputId: input.inputId, action: 'accept', content: { format: 'pdf' } }).then(() => false, () => true);
      ctx.check(refused, 'an answer off the schema was refused');
      await ctx.env.agent.answerInput(ctx.sessionId, { inputId: input.inputId, action: 'accept', content: { format: 'csv' } });
      const events = await collectEvents(ctx.env.agent, ctx.sessionId, turnCompleted(turnId));
      ctx.check(events.some((e) => e.event.type === 'input_answered' && e.event.action === 'accept'), 'the answer was taken');
      const result = await ctx.env.agent.waitForTurn(ctx.sessionId, turnId);
      ctx.check(result.outcome === 'completed', 'the turn completed');
    },
  }),
  defineScenario({
    name: 'mcp-elicitation-decline-timeout',
    description: 'an MCP elicitation declined by signal, then one nobody answers (timeout: cancel back to the server), then a poison inputRequested and answerInput ignored',
    env: { mcp: true },
    session: { limits: { confirmationTimeoutMs: 1_000 } },
    async run(ctx) {
      const handle = ctx.env.client.workflow.getHandle(workflowIdFor(ctx.sessionId));
      const first = await ask(ctx, 'export the revenue report');
      await handle.signal(answerInputSignal, { inputId: first.input.inputId, action: 'decline', principal: { tenant: 'acme', user: 'ana' } });
      await ctx.env.agent.waitForTurn(ctx.sessionId, first.turnId);
      const second = await ask(ctx, 'export it again');
      const events = await collectEvents(ctx.env.agent, ctx.sessionId, turnCompleted(second.turnId));
      ctx.check(events.some((e) => e.event.type === 'input_answered' && e.event.answeredBy === 'timeout'), 'the second question timed out');
      await handle.signal(answerInputSignal, { inputId: 'call_nobody:1', action: 'accept', content: { x: 1 } });
      await handle.signal('inputRequested', { inputId: 'nope' });
      await handle.signal(answerInputSignal, null as never);
      const view = await ctx.env.agent.getSession(ctx.sessionId);
      ctx.check(view.counters.inputsRequested === 2, `two questions were asked (${view.counters.inputsRequested})`);
      ctx.env.model.script([{ respond: { kind: 'text', text: 'still here' } }], { lane: ctx.sessionId });
      const after = await ctx.env.agent.ask(ctx.options(), { text: 'still there?' });
      ctx.check(after.turn.text === 'still here', `the session answered after the poison signals: ${JSON.stringify(after.turn).slice(0, 400)}`);
      // The answer without a principal is refused as unauthorized; the other two do not parse. (A late text delta can
      // add to signalsIgnored, so the sum is a floor.)
      const { signalsIgnored, signalsUnauthorized } = (await ctx.env.agent.getSession(ctx.sessionId)).counters;
      ctx.check(signalsIgnored >= 2 && signalsUnauthorized >= 1, `the poison signals were ignored (${signalsIgnored}) and refused (${signalsUnauthorized})`);
    },
  }),
];
