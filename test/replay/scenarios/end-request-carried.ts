import { workflowIdFor } from '../../../workflows/messages';
import { sessionOptions, uniqueId } from '../../support/test-env';
import { defineScenario } from '../scenario';

const limits = { maxHistoryEvents: 200 };

export default defineScenario({
  name: 'end-request-carried',
  description: 'an end request during the turn after which the run continues as new is carried to the next run (patch end-request-carried), which closes; records the run that continued',
  session: { limits },
  endSession: false,
  async run(ctx) {
    const runOf = async (sessionId: string) => (await ctx.env.client.workflow.getHandle(workflowIdFor(sessionId)).describe()).runId;
    // A first session says how many turns a run holds (every turn here is alike).
    const probe = uniqueId('probe');
    const probeTurn = async (i: number) => {
      ctx.env.model.script([{ respond: { kind: 'text' as const, text: `probe ${i}` } }], { lane: probe });
      await ctx.env.agent.ask(sessionOptions(probe, { limits }), { text: `probe ${i}` });
    };
    await probeTurn(1);
    const probeRun = await runOf(probe);
    let perRun = 1;
    while ((await runOf(probe)) === probeRun && perRun < 30) await probeTurn(++perRun);
    await ctx.env.agent.end(probe, 'probe done');

    ctx.env.model.script(
      [
        ...Array.from({ length: perRun - 1 }, (_, i) => ({ respond: { kind: 'text' as const, text: `answer ${i + 1}` } })),
        { respond: { kind: 'text' as const, text: 'slow last answer', chunkSize: 4, delayMs: 300 } },
      ],
      { lane: ctx.sessionId },
    );
    for (let i = 1; i < perRun; i++) await ctx.env.agent.ask(ctx.options(), { text: `message ${i}` });
    const first = await runOf(ctx.sessionId);
    const last = ctx.env.agent.ask(ctx.options(), { text: `message ${perRun}` });
    await new Promise((r) => setTimeout(r, 600));
    await ctx.env.agent.end(ctx.sessionId, 'user left');
    await last.catch(() => undefined);
    const result = (await ctx.env.client.workflow.getHandle(workflowIdFor(ctx.sessionId)).result()) as { status?: string };
    ctx.check(result.status === 'archived', 'the next run closed at once');
    ctx.check((await runOf(ctx.sessionId)) !== first, 'the session continued as new before it closed');
    ctx.recordRun(first);
  },
});
