import { defineScenario } from '../scenario';
import { say } from '../scenario-helpers';

export default defineScenario({
  name: 'long-key-fact-subject',
  description: 'a rule stated in one 2,000-letter word pins a key fact whose subject is clipped to 80 characters (patch key-fact-subjects-clipped)',
  async run(ctx) {
    ctx.env.model.script([{ respond: { kind: 'text', text: 'Noted.' } }], { lane: ctx.sessionId });
    const turn = await say(ctx, `never a${'x'.repeat(2_000)}`);
    ctx.check(turn.outcome === 'completed', 'the turn completed');
    const { keyFacts } = await ctx.env.agent.getSession(ctx.sessionId);
    ctx.check(keyFacts.length === 1 && keyFacts[0]!.subject.length === 80, `one fact, its subject clipped to 80 characters (${keyFacts.map((f) => f.subject.length).join(', ')})`);
  },
});
