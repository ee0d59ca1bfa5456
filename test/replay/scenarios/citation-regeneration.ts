import type { StepResponse } from '../../../scripted-model';
import { defineScenario } from '../scenario';
import { MEMORY_ON, extractNothing, homeCityMemoryId, seedHomeCity, systemOf } from '../memory-scenario';
import { say } from '../scenario-helpers';

export default defineScenario({
  name: 'citation-regeneration',
  description: 'an answer citing an unknown memory id is regenerated once, and the corrected answer kept',
  session: MEMORY_ON,
  env: { modelFallback: extractNothing },
  async run(ctx) {
    await seedHomeCity(ctx);
    ctx.env.model.script(
      [
        { match: { where: (req) => /## Recalled memories/.test(systemOf(req)) }, respond: { kind: 'text', text: 'Your home city is Lisbon [mem:zz99].' } },
        {
          match: { lastUserMessage: /^\[runtime check\] Your previous answer cited \[mem:zz99\]/ },
          respond: (req): StepResponse => ({ kind: 'text', text: `Your home city is Lisbon [mem:${homeCityMemoryId(req)}].` }),
        },
      ],
      { lane: ctx.sessionId },
    );
    await say(ctx, "What is the user's home city?");
    const view = await ctx.env.agent.getSession(ctx.sessionId);
    ctx.check(view.counters.citationsRegenerated === 1, 'the answer was regenerated once');
  },
});
