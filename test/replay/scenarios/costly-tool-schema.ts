import { join } from 'node:path';
import { PROJECT_ROOT } from '../../support/mcp-servers';
import { defineScenario } from '../scenario';
import { say } from '../scenario-helpers';

export default defineScenario({
  name: 'costly-tool-schema',
  description: 'a call to an MCP tool whose schema doubles its checks 40 times is left for the server to check and runs, instead of a workflow task that never ends (patch costly-schemas-unchecked)',
  env: { mcpServers: { costly: { command: process.execPath, args: ['--import', 'tsx', join(PROJECT_ROOT, 'test/support/costly-schema-mcp-server.ts')], cwd: PROJECT_ROOT } } },
  async run(ctx) {
    ctx.env.model.script(
      [
        { respond: { kind: 'tool_calls', calls: [{ id: 'call_lookup', name: 'mcp_costly_lookup', arguments: { q: 'ab' } }] } },
        { match: { hasToolResults: true }, respond: { kind: 'text', text: 'Found it.' } },
      ],
      { lane: ctx.sessionId },
    );
    const turn = await say(ctx, 'look up ab');
    ctx.check(turn.outcome === 'completed' && turn.text === 'Found it.', 'the turn completed');
    const tool = ctx.env.model.requestsFor(ctx.sessionId)[1]?.body as { messages?: Array<{ role: string; content?: unknown }> } | undefined;
    ctx.check(tool?.messages?.some((m) => m.role === 'tool' && m.content === 'looked up ab') === true, 'the tool ran and its answer reached the model');
  },
});
