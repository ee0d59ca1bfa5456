import { defineScenario } from '../scenario';
import { MEMORY_ON, extractNothing, seedHomeCity, systemOf } from '../memory-scenario';
import { say } from '../scenario-helpers';

export default defineScenario({
  name: 'memory-recall',
  description: 'a stored memory is recalled (local activity) into the prompt region; extraction at archive keeps nothing',
  session: MEMORY_ON,
  env: { modelFallback: extractNothing },
  async run(ctx) {
    await seedHomeCity(ctx);
    ctx.env.model.script(
      [{ match: { where: (req) => /## Recalled memories[\s\S]*home city is Lisbon/.test(systemOf(req)) }, respond: { kind: 'text', text: 'Your home city is Lisbon.' } }],
      { lane: ctx.sessionId },
    );
    await say(ctx, "What is the user's home city?");
    const view = await ctx.env.agent.getSession(ctx.sessionId);
    ctx.check(view.counters.memoriesRecalled > 0, 'a memory was recalled');
  },
});
