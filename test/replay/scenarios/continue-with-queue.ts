import { SessionBusyError } from '../../../client';
import { workflowIdFor } from '../../../workflows/messages';
import { defineScenario } from '../scenario';

export default defineScenario({
  name: 'continue-with-queue',
  description: 'messages sent faster than turns run keep the queue from emptying; past twice its history budget the run continues as new with them waiting (patch continue-with-queue)',
  session: { busyPolicy: 'queue', limits: { maxHistoryEvents: 200 } },
  env: { modelFallback: () => ({ kind: 'text' as const, text: 'ack' }) },
  async run(ctx) {
    const handle = ctx.env.client.workflow.getHandle(workflowIdFor(ctx.sessionId));
    await ctx.env.agent.ask(ctx.options(), { text: 'message 0' });
    const { runId: firstRunId } = await handle.describe();
    for (let i = 1; i <= 60; i++) {
      for (;;) {
        try {
          await ctx.env.agent.send(ctx.options(), { text: `message ${i}`, clientMessageId: `q${i}` });
          break;
        } catch (err) {
          if (!(err instanceof SessionBusyError)) throw err;
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      }
    }
    await ctx.env.agent.waitForTurn(ctx.sessionId, 'turn-61');
    const first = await ctx.env.client.workflow.getHandle(workflowIdFor(ctx.sessionId), firstRunId).describe();
    ctx.check(first.status.name === 'CONTINUED_AS_NEW', `the first run continued as new (${first.status.name}, ${first.historyLength} events)`);
    ctx.recordRun(firstRunId);
    await ctx.env.agent.end(ctx.sessionId);
  },
});
