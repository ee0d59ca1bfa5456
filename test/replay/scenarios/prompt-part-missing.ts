import { defineScenario } from '../scenario';
import { say } from '../scenario-helpers';

export default defineScenario({
  name: 'prompt-part-missing',
  description: 'model calls by reference; a new worker that holds none of the parts and cannot read the run\'s history fails one as PromptPartMissing and the prompt is sent whole again',
  async run(ctx) {
    const toolTurn = (answer: string) =>
      ctx.env.model.script(
        [
          { respond: { kind: 'tool_calls', calls: [{ id: 'call_calc', name: 'local_calculate', arguments: { expression: '6*7' } }] } },
          { match: { hasToolResults: true }, respond: { kind: 'text', text: answer } },
        ],
        { lane: ctx.sessionId },
      );
    toolTurn('It is 42.');
    const first = await say(ctx, 'what is 6 times 7?');
    ctx.check(first.outcome === 'completed', 'turn 1 completed');
    await ctx.env.worker.shutdown();
    // A fault injector: the new worker's reads of the run's history fail.
    ctx.env.worker = await ctx.env.startWorker(undefined, {
      promptPartsReader: async () => {
        throw new Error('injected: history unreadable');
      },
    });
    toolTurn('Still 42.');
    const second = await say(ctx, 'and again?');
    ctx.check(second.outcome === 'completed' && second.text === 'Still 42.', 'turn 2 completed after the whole prompt was sent again');
  },
});
