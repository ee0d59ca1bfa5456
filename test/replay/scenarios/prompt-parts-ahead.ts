import { bigReadTool } from '../../support/big-read-tool';
import { defineScenario } from '../scenario';
import { say } from '../scenario-helpers';

export default defineScenario({
  name: 'prompt-parts-ahead',
  description: "a step of twelve long results (576 KB) is over what one model call's input takes: its parts go ahead in holdPromptParts inputs, and the call names them (patch prompt-parts-ahead)",
  env: { extraTools: [bigReadTool] },
  session: { limits: { windowMaxTokens: 1_000_000 } },
  async run(ctx) {
    const reads = Array.from({ length: 12 }, (_, i) => ({ id: `read_${i}`, name: 'local_big_read', arguments: { n: 16_000 } }));
    ctx.env.model.script([{ respond: { kind: 'tool_calls', calls: reads } }, { match: { hasToolResults: true }, respond: { kind: 'text', text: 'Read.' } }], { lane: ctx.sessionId });
    const turn = await say(ctx, 'read the twelve files');
    ctx.check(turn.outcome === 'completed' && turn.text === 'Read.', 'the turn completed');
    const history = await ctx.env.client.workflow.getHandle(`session-${ctx.sessionId}`).fetchHistory();
    const held = (history.events ?? []).filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'holdPromptParts').length;
    ctx.check(held === 2, `the parts went ahead in two inputs (${held})`);
  },
});
