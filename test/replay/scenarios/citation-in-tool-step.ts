import type { StepResponse } from '../../../scripted-model';
import { defineScenario } from '../scenario';
import { MEMORY_WITH_TOOLS, homeCityMemoryId, recalledBeforeTools, seedHomeCity } from '../memory-scenario';
import { say } from '../scenario-helpers';

export default defineScenario({
  name: 'citation-in-tool-step',
  description: 'an unknown memory id in text beside a tool call is removed, and one cited in full-width brackets in the final answer is regenerated once (patch citations-checked-every-step)',
  ...MEMORY_WITH_TOOLS,
  async run(ctx) {
    await seedHomeCity(ctx);
    ctx.env.model.script(
      [
        {
          match: { where: recalledBeforeTools },
          respond: { kind: 'tool_calls', text: 'Checking your notes [mem:zz99] first.', calls: [{ id: 'call_note', name: 'local_note', arguments: { text: 'home city asked' } }] },
        },
        { match: { hasToolResults: true }, respond: { kind: 'text', text: 'Your home city is Lisbon 【mem:yy11】.' } },
        {
          match: { lastUserMessage: /^\[runtime check\] Your previous answer cited \[mem:yy11\]/ },
          respond: (req): StepResponse => ({ kind: 'text', text: `Your home city is Lisbon [mem:${homeCityMemoryId(req)}].` }),
        },
      ],
      { lane: ctx.sessionId },
    );
    const turn = await say(ctx, "What is the user's home city?");
    ctx.check(!turn.text.includes('zz99') && !turn.text.includes('yy11'), 'no unknown id reached the answer');
    const view = await ctx.env.agent.getSession(ctx.sessionId);
    ctx.check(view.counters.citationsRegenerated === 1, 'the final answer was regenerated once');
  },
});
