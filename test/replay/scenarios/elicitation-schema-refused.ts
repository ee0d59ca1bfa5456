import { workflowIdFor } from '../../../workflows/messages';
import { defineScenario } from '../scenario';
import { ask } from './mcp-elicitation';

export default defineScenario({
  name: 'elicitation-schema-refused',
  description: 'while an MCP elicitation waits, an inputRequested whose schema doubles its answer checks (allOf of one $ref, nested) is ignored, and the real question is answered (patch elicitation-schema-flat)',
  env: { mcp: true },
  async run(ctx) {
    const { turnId, input } = await ask(ctx, 'export the revenue report');
    const defs: Record<string, unknown> = { d30: { type: 'string' } };
    for (let i = 29; i >= 0; i--) defs[`d${i}`] = { allOf: [{ $ref: `#/properties/x/$defs/d${i + 1}` }, { $ref: `#/properties/x/$defs/d${i + 1}` }] };
    await ctx.env.client.workflow.getHandle(workflowIdFor(ctx.sessionId)).signal('inputRequested', {
      turnId,
      toolCallId: input.toolCallId,
      inputId: `${input.toolCallId}:2`,
      server: 'report',
      message: 'one more thing',
      requestedSchema: { type: 'object', properties: { x: { type: 'string', $ref: '#/properties/x/$defs/d0', $defs: defs } } },
      waitMs: 60_000,
    });
    const view = await ctx.env.agent.getSession(ctx.sessionId);
    ctx.check(view.pendingInputs.map((p) => p.inputId).join() === input.inputId, `only the real question waits: ${JSON.stringify(view.pendingInputs.map((p) => p.inputId))}`);
    await ctx.env.agent.answerInput(ctx.sessionId, { inputId: input.inputId, action: 'accept', content: { format: 'csv' } });
    const result = await ctx.env.agent.waitForTurn(ctx.sessionId, turnId);
    ctx.check(result.outcome === 'completed', 'the turn completed');
    ctx.check((await ctx.env.agent.getSession(ctx.sessionId)).counters.signalsIgnored >= 1, 'the question was counted as ignored');
  },
});
