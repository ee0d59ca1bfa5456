import { defineScenario } from '../scenario';
import { say } from '../scenario-helpers';

export default defineScenario({
  name: 'parallel-tools',
  description: 'two tool calls in one model response run in parallel, results go back in call order',
  env: { probeTools: true },
  async run(ctx) {
    ctx.env.model.script(
      [
        {
          respond: {
            kind: 'tool_calls',
            text: 'Let me check both.',
            calls: [
              { id: 'call_a', name: 'local_sleepy', arguments: { ms: 300, label: 'a' } },
              { id: 'call_b', name: 'local_sleepy', arguments: { ms: 100, label: 'b' } },
            ],
          },
        },
        { match: { hasToolResults: true }, respond: { kind: 'text', text: 'Both done.' } },
      ],
      { lane: ctx.sessionId },
    );
    const result = await say(ctx, 'check a and b');
    ctx.check(result.toolCalls === 2 && ctx.probe.runs.length === 2, 'both tools ran');
  },
});
