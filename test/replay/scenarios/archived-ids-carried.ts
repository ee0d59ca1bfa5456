import type { StepResponse } from '../../../scripted-model';
import { workflowIdFor } from '../../../workflows/messages';
import { defineScenario } from '../scenario';
import { resendUnderAnotherUpdateId, say } from '../scenario-helpers';

export default defineScenario({
  name: 'archived-ids-carried',
  description: 'the message ids a restored run read from the archive go with it across continue-as-new: a retry there is the turn it was',
  // The turns that fill the restored run's history answer this.
  env: { modelFallback: (): StepResponse => ({ kind: 'text', text: 'Fine.' }) },
  async run(ctx) {
    ctx.env.model.script([{ respond: { kind: 'text', text: 'Booked.' } }], { lane: ctx.sessionId });
    const handle = () => ctx.env.client.workflow.getHandle(workflowIdFor(ctx.sessionId));
    await say(ctx, 'book it', { message: { clientMessageId: 'book-1' }, options: { limits: { idleTimeoutMs: 1_000 } } });
    await handle().result();
    const limits = { idleTimeoutMs: 60_000, maxHistoryEvents: 200 };
    await say(ctx, 'one', { options: { limits } });
    const restored = (await handle().describe()).runId;
    for (let i = 0; i < 25 && (await handle().describe()).runId === restored; i++) await say(ctx, `more ${i}`, { options: { limits } });
    ctx.check((await handle().describe()).runId !== restored, 'the restored run continued as new');
    const again = await resendUnderAnotherUpdateId(ctx, 'book it', 'book-1');
    ctx.check(again.turnId === 'turn-1', `the retry is the turn it was (${JSON.stringify(again)})`);
  },
});
