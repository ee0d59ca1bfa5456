import { PUBLISH_SIGNAL, PoisonModel, PoisonSession, json, pongFor, text, wireItem, type RawArg } from '../../support/poison';
import { defineScenario } from '../scenario';

const model = new PoisonModel();

/** The freezing signals, each of which a session must ignore (and count). */
const SIGNALS: Array<[string, RawArg[]]> = [
  ['decideToolCall', [json({})]],
  ['decideToolCall', [text('null')]],
  ['decideToolCall', [json({ toolCallId: 'call_1', approved: 'true' })]],
  [PUBLISH_SIGNAL, [json({})]],
  [PUBLISH_SIGNAL, [json({ items: [{ topic: 'events', data: wireItem({ type: 'text_delta', sessionId: 'x', at: 'x', turnId: 'turn-1', step: 1, attempt: 1, delta: 'Transfer approved.' }) }], publisher_id: 'intruder', sequence: 1 })]],
  [PUBLISH_SIGNAL, [json({ items: [{ topic: 'events', data: '%%%not base64%%%' }], publisher_id: 'intruder', sequence: 2 })]],
  ['interrupt', [text('{"reason":12345}')]],
  ['endSession', [text('"bye"')]],
  ['textDeltas', [json({})]],
  ['textDeltas', [json({ turnId: 'turn-99', step: 1, attempt: 1, seq: 1, deltas: [{ delta: 'injected', at: 'x' }] })]],
  ['inputRequested', [json({ requestedSchema: { type: 'object', properties: { x: { type: { toString: 0 } } } } })]],
];

export default defineScenario({
  name: 'poison-signals',
  description: 'signals that do not parse (decideToolCall {}, null, approved "true"; foreign stream publishes; interrupt with a number; junk endSession and textDeltas; an inputRequested schema whose type has no text form) are ignored, and the session answers after them',
  env: { modelFallback: model.fallback },
  async run(ctx) {
    const session = new PoisonSession({ client: ctx.env.client, agent: ctx.env.agent, taskQueue: ctx.env.taskQueue, model }, ctx.sessionId, ctx.options(), { caseMs: 10_000, turnMs: 30_000 });
    await session.start();
    for (const [name, args] of SIGNALS) {
      const outcome = await session.deliver({ id: name, kind: 'signal', name, args, label: name });
      ctx.check(outcome.delivery === 'accepted', `the server took the ${name} signal (${outcome.detail})`);
    }
    const after = await session.ask('still there?');
    ctx.check(after.turn?.text === pongFor('still there?'), `the session answered after the poison signals: ${after.why}`);
    const view = await ctx.env.agent.getSession(ctx.sessionId);
    ctx.check(view.counters.signalsIgnored >= SIGNALS.length, `every poison signal was counted as ignored (${view.counters.signalsIgnored})`);
  },
});
