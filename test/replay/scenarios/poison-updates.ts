import { POLL_UPDATE, PoisonModel, PoisonSession, hugeString, json, pongFor, text, type RawArg } from '../../support/poison';
import { defineScenario } from '../scenario';

const model = new PoisonModel();

/** Updates with bad input: each validator must reject it, so nothing of it reaches the history. */
const UPDATES: Array<[string, RawArg[]]> = [
  ['sendMessage', [json({ text: 5 })]],
  ['sendMessage', [text('null')]],
  ['sendMessage', [json({ message: 'hi' })]],
  ['sendMessage', [text(`{"text":${hugeString(2_500_000)}}`)]],
  ['decideToolCall', [json({ toolCallId: 'call_1', approved: 'true' })]],
  ['waitForTurn', [text('null')]],
  ['waitForTurn', [json({})]],
  ['waitForTurn', [json({ turnId: 5 })]],
  [POLL_UPDATE, [json({})]],
  [POLL_UPDATE, [json({ topics: ['events'], from_offset: -1 })]],
];

export default defineScenario({
  name: 'poison-updates',
  description: 'updates with bad input (sendMessage of wrong types and 2.5 MB, decideToolCall approved "true", waitForTurn null/{}/5, stream poll junk) are rejected by validators; the session answers after them',
  env: { modelFallback: model.fallback },
  async run(ctx) {
    const session = new PoisonSession({ client: ctx.env.client, agent: ctx.env.agent, taskQueue: ctx.env.taskQueue, model }, ctx.sessionId, ctx.options(), { caseMs: 10_000, turnMs: 30_000 });
    await session.start();
    for (const [name, args] of UPDATES) {
      const outcome = await session.deliver({ id: name, kind: 'update', name, args, label: name });
      ctx.check(outcome.delivery === 'rejected' || outcome.delivery === 'refused', `the ${name} update was rejected (${outcome.delivery}: ${outcome.detail})`);
    }
    const after = await session.ask('still there?');
    ctx.check(after.turn?.text === pongFor('still there?'), `the session answered after the poison updates: ${after.why}`);
  },
});
