import { collectEvents, turnCompleted } from '../../support/test-env';
import { scriptCall } from '../../support/scripted-steps';
import { defineScenario } from '../scenario';

export default defineScenario({
  name: 'mcp-progress',
  description: 'an MCP tool over stdio (a real server process) reports progress, relayed as tool_call_progress events',
  env: { mcp: true },
  async run(ctx) {
    scriptCall(ctx.env.model, ctx.sessionId, 'mcp_report_slow', { ms: 1_200, steps: 3 });
    const { turnId } = await ctx.env.agent.send(ctx.options(), { text: 'work slowly' });
    const events = await collectEvents(ctx.env.agent, ctx.sessionId, turnCompleted(turnId));
    ctx.check(events.some((e) => e.event.type === 'tool_call_progress'), 'progress events were published');
  },
});
