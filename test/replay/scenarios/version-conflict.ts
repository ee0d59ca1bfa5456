import { SessionVersionConflictError } from '../../../client';
import { defineScenario } from '../scenario';
import { say } from '../scenario-helpers';

export default defineScenario({
  name: 'version-conflict',
  description: 'a message with a stale expectedVersion is rejected with the current version; one with the right version runs',
  async run(ctx) {
    ctx.env.model.script([{ respond: { kind: 'text', text: 'one' } }, { respond: { kind: 'text', text: 'two' } }], { lane: ctx.sessionId });
    await say(ctx, 'first');
    const err = await ctx.env.agent.send(ctx.options(), { text: 'second', expectedVersion: 0 }).catch((e: unknown) => e);
    ctx.check(err instanceof SessionVersionConflictError && err.currentVersion === 1, 'the stale version was refused');
    await say(ctx, 'second', { message: { expectedVersion: 1 } });
  },
});
