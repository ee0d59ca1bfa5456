import { DEEP, PoisonModel, PoisonSession, deepJson, hugeString, manyKeys, pongFor } from '../../support/poison';
import { defineScenario } from '../scenario';

const model = new PoisonModel();

/** Tool-call arguments a prompt-injected model can send: each must be refused as ToolInputInvalid before it reaches history or events. */
const ARGUMENTS = [`{"expression":${deepJson(DEEP)}}`, deepJson(DEEP, 'object'), manyKeys(10_000), `{"expression":${hugeString(300 * 1024)}}`];

export default defineScenario({
  name: 'poison-tool-args',
  description: 'model tool calls with arguments nested 20,000 deep, with 10,000 keys and of 300 KB are rejected as ToolInputInvalid; the session answers after them',
  env: { modelFallback: model.fallback },
  async run(ctx) {
    const session = new PoisonSession({ client: ctx.env.client, agent: ctx.env.agent, taskQueue: ctx.env.taskQueue, model }, ctx.sessionId, ctx.options(), { caseMs: 10_000, turnMs: 30_000 });
    await session.start();
    for (const [i, args] of ARGUMENTS.entries()) {
      const outcome = await session.deliver({ id: `args-${i}-${ctx.sessionId}`, kind: 'toolCalls', label: `args ${i}`, calls: [{ id: `call_poison_${i}`, name: 'local_calculate', arguments: args }] });
      ctx.check(outcome.detail.startsWith('turn completed'), `the turn with hostile arguments ${i} completed (${outcome.detail})`);
    }
    const view = await ctx.env.agent.getSession(ctx.sessionId);
    const toolMessages = view.window.flatMap((t) => t.messages).filter((m) => m.role === 'tool');
    ctx.check(toolMessages.length === ARGUMENTS.length && toolMessages.every((m) => String(m.content).includes('ToolInputInvalid')), 'every hostile call was refused as ToolInputInvalid');
    const after = await session.ask('still there?');
    ctx.check(after.turn?.text === pongFor('still there?'), `the session answered after the hostile tool calls: ${after.why}`);
  },
});
