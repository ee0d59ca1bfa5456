import { workflowIdFor } from '../../../workflows/messages';
import { defineScenario } from '../scenario';
import { say } from '../scenario-helpers';

export default defineScenario({
  name: 'archived-events',
  description: 'the archive keeps the last events, ending with the archived status (patch archived-status-in-archive); a reader of the closed session gets them, and the restored run continues their offsets',
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
    let last: string | undefined;
    for await (const e of ctx.env.agent.events(ctx.sessionId)) {
      archived.push(e.offset);
      last = e.event.type === 'status_change' ? `status_change ${e.event.status}` : e.event.type;
    }
    ctx.check(archived.length > 3 && archived.every((o, i) => o === i), `the archive serves offsets 0..n in order (got ${archived.join(',')})`);
    ctx.check(last === 'status_change archived', `the archive's last event says the session was archived (got ${last})`);
    await say(ctx, 'Are you there?');
    const next: number[] = [];
    for await (const e of ctx.env.agent.events(ctx.sessionId, { fromOffset: archived.at(-1)! + 1 })) {
      next.push(e.offset);
      if (e.event.type === 'turn_completed') break;
    }
    ctx.check(next[0] === archived.at(-1)! + 1, `the restored run continues at offset ${archived.at(-1)! + 1} (got ${next[0]})`);
  },
});
