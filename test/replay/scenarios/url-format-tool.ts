import { join } from 'node:path';
import { PROJECT_ROOT } from '../../support/mcp-servers';
import { defineScenario } from '../scenario';
import { say } from '../scenario-helpers';

/** A dot-less host of 87 characters and a space: seconds to years for the validator's own `url` expression. */
export const STALLING_URL = `http://${'intranetdocumentationserver01'.repeat(3)} `;

export default defineScenario({
  name: 'url-format-tool',
  description: 'a call whose format "url" argument would stall the validator\'s regular expression is refused at once, and a good URL runs (patch url-format-linear)',
  env: { mcpServers: { web: { command: process.execPath, args: ['--import', 'tsx', join(PROJECT_ROOT, 'test/support/url-format-mcp-server.ts')], cwd: PROJECT_ROOT } } },
  async run(ctx) {
    ctx.env.model.script(
      [
        { respond: { kind: 'tool_calls', calls: [{ id: 'call_bad', name: 'mcp_web_fetch_page', arguments: { url: STALLING_URL } }] } },
        { match: { hasToolResults: true }, respond: { kind: 'tool_calls', calls: [{ id: 'call_good', name: 'mcp_web_fetch_page', arguments: { url: 'https://example.com/handbook' } }] } },
        { match: { hasToolResults: true }, respond: { kind: 'text', text: 'Fetched.' } },
      ],
      { lane: ctx.sessionId },
    );
    const turn = await say(ctx, 'fetch the handbook');
    ctx.check(turn.outcome === 'completed' && turn.text === 'Fetched.', 'the turn completed');
    const requests = ctx.env.model.requestsFor(ctx.sessionId).map((r) => r.body as { messages?: Array<{ role: string; content?: unknown }> });
    const toolMessages = (requests[2]?.messages ?? []).filter((m) => m.role === 'tool').map((m) => String(m.content));
    ctx.check(toolMessages.length === 2 && /url|URI/.test(toolMessages[0] ?? '') && toolMessages[1] === 'fetched https://example.com/handbook', `the bad URL was refused and the good one ran: ${JSON.stringify(toolMessages)}`);
  },
});
