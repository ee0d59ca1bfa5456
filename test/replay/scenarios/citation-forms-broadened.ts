import type { StepResponse } from '../../../scripted-model';
import { defineScenario } from '../scenario';
import { MEMORY_WITH_TOOLS, homeCityMemoryId, recalledBeforeTools, seedHomeCity } from '../memory-scenario';
import { say } from '../scenario-helpers';

export default defineScenario({
  name: 'citation-forms-broadened',
  description: 'an unknown memory id cited in parentheses beside a tool call is removed, and one joined by "and" in the final answer is regenerated once (patch citation-forms-broadened)',
  ...MEMORY_WITH_TOOLS,
  async run(ctx) {
    await seedHomeCity(ctx);
    ctx.env.model.script(
      [
        {
          match: { where: recalledBeforeTools },
          respond: { kind: 'tool_calls', text: 'Checking your notes (mem:ffee) first.', calls: [{ id: 'call_note', name: 'local_note', arguments: { text: 'home city asked' } }] },
        },
        {
          match: { hasToolResults: true },
          respond: (req): StepResponse => ({ kind: 'text', text: `Your home city is Lisbon [mem:${homeCityMemoryId(req)} and mem:beef].` }),
        },
        {
          match: { lastUserMessage: /^\[runtime check\] Your previous answer cited \[mem:beef\]/ },
          respond: (req): StepResponse => ({ kind: 'text', text: `Your home city is Lisbon [mem:${homeCityMemoryId(req)}].` }),
        },
      ],
      { lane: ctx.sessionId },
    );
    const turn = await say(ctx, "What is the user's home city?");
    ctx.check(!turn.text.includes('ffee') && !turn.text.includes('beef'), 'no unknown id reached the answer');
    ctx.check(/Lisbon \[mem:[0-9a-f]+\]\.$/.test(turn.text), 'the regenerated answer cites the recalled memory');
    const view = await ctx.env.agent.getSession(ctx.sessionId);
    ctx.check(view.counters.citationsRegenerated === 1, 'the final answer was regenerated once');
    ctx.check(view.counters.citationsFlagged === 1, 'the id beside the tool call was removed');
  },
});
