import { sendMessageUpdate, workflowIdFor } from '../../../workflows/messages';
import type { agentSession } from '../../../workflows/agent-session';
import { defineScenario } from '../scenario';

const TURNS = 52;

export default defineScenario({
  name: 'forgotten-turn-result',
  description: 'a message sent again for a turn whose result the run no longer keeps is refused (patch forgotten-turn-result), and the session still closes',
  session: { limits: { windowMaxTurns: 200 } },
  async run(ctx) {
    ctx.env.model.script(Array.from({ length: TURNS }, (_, i) => ({ respond: { kind: 'text' as const, text: `answer ${i + 1}` } })), { lane: ctx.sessionId });
    const first = await ctx.env.agent.ask(ctx.options(), { text: 'message 1', clientMessageId: 'm-1' });
    for (let i = 2; i <= TURNS; i++) await ctx.env.agent.ask(ctx.options(), { text: `message ${i}` });
    const handle = ctx.env.client.workflow.getHandle<typeof agentSession>(workflowIdFor(ctx.sessionId));
    const again = await handle
      .executeUpdate(sendMessageUpdate, { args: [{ text: 'message 1', clientMessageId: 'm-1', waitForTurn: true, principal: { tenant: 'acme', user: 'ana' } }] })
      .then(() => 'answered', (err: unknown) => String((err as { cause?: { message?: string } }).cause?.message ?? err));
    ctx.check(again.includes(`handled as ${first.turnId}`) && again.includes('no longer keeps'), `the message sent again was refused (got ${again})`);
  },
});
