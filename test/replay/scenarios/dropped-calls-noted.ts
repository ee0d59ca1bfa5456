import { defineScenario } from '../scenario';
import { say } from '../scenario-helpers';

export default defineScenario({
  name: 'dropped-calls-noted',
  description: 'a response with 40 tool calls: 32 run, and the last result tells the model the other 8 were not (patch dropped-calls-noted)',
  env: { probeTools: true },
  async run(ctx) {
    const calls = Array.from({ length: 40 }, (_, i) => ({ id: `call_${i}`, name: 'local_current_time', arguments: { timeZone: 'UTC' } }));
    ctx.env.model.script(
      [
        { respond: { kind: 'tool_calls', calls } },
        {
          match: { where: (req) => String(req.messages.filter((m) => m.role === 'tool').at(-1)?.content ?? '').includes('8 more tool call(s) in that response were not run') },
          respond: { kind: 'text', text: 'Thirty-two of them.' },
        },
      ],
      { lane: ctx.sessionId },
    );
    const turn = await say(ctx, 'the time, forty times');
    ctx.check(turn.toolCalls === 32 && turn.text === 'Thirty-two of them.', `32 calls ran and the model was told of the rest (${JSON.stringify(turn)})`);
  },
});
