import { workflowIdFor } from '../../../workflows/messages';
import { defineScenario } from '../scenario';
import { say } from '../scenario-helpers';

export default defineScenario({
  name: 'archived-events',
  description: 'the archive keeps the last events; a reader of the closed session gets them, and the restored run continues their offsets',
  session: { limits: { idleTimeoutMs: 1_000 }, memory: { enabled: false } },
  async run(ctx) {
    ctx.env.model.script(
      [
        { respond: { kind: 'text', text: 'Noted.' } },
        { respond: { kind: 'text', text: 'Still here.' } },
      ],
      { lane: ctx.sessionId },
    );
    await say(ctx, 'Remember the code 7781.');
    await ctx.env.client.workflow.getHandle(workflowIdFor(ctx.sessionId)).result();
    const archived: number[] = [];
    for await (const e of ctx.env.agent.events(ctx.sessionId)) archived.push(e.offset);
    ctx.check(archived.length > 3 && archived.every((o, i) => o === i), `the archive serves offsets 0..n in order (got ${archived.join(',')})`);
    await say(ctx, 'Are you there?');
    const next: number[] = [];
    for await (const e of ctx.env.agent.events(ctx.sessionId, { fromOffset: archived.at(-1)! + 1 })) {
      next.push(e.offset);
      if (e.event.type === 'turn_completed') break;
    }
    ctx.check(next[0] === archived.at(-1)! + 1, `the restored run continues at offset ${archived.at(-1)! + 1} (got ${next[0]})`);
  },
});
