import { MemoryRepository } from '../../../activities/memory/memory-repository';
import type { StepResponse } from '../../../scripted-model';
import { eventually } from '../../support/test-env';
import { defineScenario } from '../scenario';
import { EXTRACTION_MARKER, MEMORY_ON } from '../memory-scenario';
import { say } from '../scenario-helpers';

export default defineScenario({
  name: 'memory-extraction',
  description: 'a "remember that" message triggers memory extraction in the background; the memory is written',
  session: MEMORY_ON,
  async run(ctx) {
    ctx.env.model.script(
      [
        { respond: { kind: 'text', text: 'Noted, the platform team.' } },
        {
          match: { systemIncludes: EXTRACTION_MARKER },
          respond: (): StepResponse => ({
            kind: 'json',
            value: {
              candidates: [
                { kind: 'fact', subject: 'user', predicate: 'team', value: 'platform', text: "The user's team is platform.", sourceMessageIndex: 0, fromTool: false, userConfirmed: true },
              ],
            },
          }),
        },
      ],
      { lane: ctx.sessionId },
    );
    await say(ctx, 'Remember that my team is platform.');
    const memories = await eventually(async () => {
      const { memories: list } = await new MemoryRepository(ctx.env.db).forNamespace(ctx.options().namespace).list();
      return list.length ? list : null;
    }, 'the extracted memory');
    ctx.check(memories[0]?.text === "The user's team is platform.", 'the memory was written');
  },
});
