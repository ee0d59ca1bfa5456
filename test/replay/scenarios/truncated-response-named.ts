import { MODEL_OUTPUT_LIMITS } from '../../../workflows/model-output-limits';
import { lastToolContent } from '../../support/scripted-steps';
import { defineScenario } from '../scenario';
import { say } from '../scenario-helpers';

/** Calls that each fit one call's limit, and together pass what one response may take. */
const EACH = MODEL_OUTPUT_LIMITS.maxArgumentChars - 4_000;
const COUNT = Math.ceil(MODEL_OUTPUT_LIMITS.maxTotalArgumentChars / EACH) + 1;

export default defineScenario({
  name: 'truncated-response-named',
  description: 'a tool call emptied because the response was over its total argument budget is refused naming that budget (patch truncated-response-named)',
  async run(ctx) {
    // Arguments the calculator's schema refuses: the calls that fit are refused without running (the history stays small).
    const calls = Array.from({ length: COUNT }, (_, i) => ({ id: `call_big_${i}`, name: 'local_calculate', arguments: JSON.stringify({ junk: '1'.repeat(EACH - 20) }) }));
    ctx.env.model.script(
      [
        { respond: { kind: 'tool_calls', calls } },
        { match: { hasToolResults: true }, respond: { kind: 'text', text: 'Too big.' } },
      ],
      { lane: ctx.sessionId },
    );
    const turn = await say(ctx, 'add them all');
    ctx.check(turn.outcome === 'completed', `the turn completed (${turn.outcome})`);
    const last = lastToolContent(ctx.env.model, ctx.sessionId);
    ctx.check(/all calls of one response may take together/.test(last), `the last call was refused naming the response's budget (${last.slice(0, 300)})`);
  },
});
