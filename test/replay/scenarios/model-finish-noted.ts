import { defineScenario } from '../scenario';
import { say } from '../scenario-helpers';

const base = { id: 'chatcmpl-raw', object: 'chat.completion.chunk', created: 0, model: 'm' };
const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({ ...base, choices: [{ index: 0, delta, finish_reason: finish }] });

export default defineScenario({
  name: 'model-finish-noted',
  description: 'a filtered answer and one that is all reasoning cut at the output limit each get an error event saying so (patch model-finish-noted)',
  async run(ctx) {
    ctx.env.model.script(
      [
        { respond: { kind: 'raw_chunks', chunks: [chunk({ role: 'assistant', content: 'Here is how to' }), chunk({}, 'content_filter')] } },
        { respond: { kind: 'raw_chunks', chunks: [chunk({ role: 'assistant', reasoning_content: 'Thinking. '.repeat(5) }), chunk({}, 'length')] } },
      ],
      { lane: ctx.sessionId },
    );
    const first = await say(ctx, 'one');
    const second = await say(ctx, 'two');
    ctx.check(first.text === 'Here is how to' && second.text === '', `the turns answered as the model did (${JSON.stringify([first.text, second.text])})`);
    const view = await ctx.env.agent.getSession(ctx.sessionId);
    ctx.check(view.version === 2, `two turns (${view.version})`);
  },
});
