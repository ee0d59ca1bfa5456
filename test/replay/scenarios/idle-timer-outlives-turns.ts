import { workflowIdFor } from '../../../workflows/messages';
import { defineScenario } from '../scenario';
import { say } from '../scenario-helpers';

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

export default defineScenario({
  name: 'idle-timer-outlives-turns',
  description: 'three turns inside one idle timeout: its timer outlives them, fires while the session waits, starts one for the rest of the wait, and that one ends the session',
  session: { limits: { idleTimeoutMs: 1_500 } },
  endSession: false,
  async run(ctx) {
    ctx.env.model.script(
      [{ respond: { kind: 'text', text: 'one' } }, { respond: { kind: 'text', text: 'two' } }, { respond: { kind: 'text', text: 'three' } }],
      { lane: ctx.sessionId },
    );
    for (const text of ['first', 'second', 'third']) {
      const turn = await say(ctx, text);
      ctx.check(turn.outcome === 'completed', `the ${text} turn completed`);
      if (text !== 'third') await pause(600);
    }
    const handle = ctx.env.client.workflow.getHandle(workflowIdFor(ctx.sessionId));
    const result = await handle.result();
    ctx.check((result as { status?: string }).status === 'archived', 'the session archived itself once idle');
    const events = (await handle.fetchHistory()).events ?? [];
    const started = events.filter((e) => e.timerStartedEventAttributes).length;
    ctx.check(started >= 2, `the first timer fired while the session waited, and another ran for the rest (${started})`);
    ctx.check(!events.some((e) => e.timerCanceledEventAttributes), 'no timer cancelled by a turn');
  },
});
