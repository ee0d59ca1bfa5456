import { eventually } from '../../support/test-env';
import { defineScenario } from '../scenario';
import { pendingCall } from '../scenario-helpers';

export default defineScenario({
  name: 'interrupt-keeps-ran-calls',
  description: 'an interrupt while one call of a step waits for confirmation, one has run and one runs: the turn keeps the finished call with its result and the others marked unfinished, and the next turn is sent them (patch interrupt-keeps-ran-calls)',
  env: { probeTools: true },
  async run(ctx) {
    ctx.env.model.script(
      [
        {
          respond: {
            kind: 'tool_calls',
            calls: [
              { id: 'call_wipe', name: 'local_wipe', arguments: { confirmText: 'all' } },
              { id: 'call_note', name: 'local_note', arguments: { text: 'lunch' } },
              { id: 'call_sleep', name: 'local_sleepy', arguments: { ms: 20_000, label: 'long' } },
            ],
          },
        },
        { match: { lastUserMessage: 'what did you do?' }, respond: { kind: 'text', text: 'I stored a note.' } },
      ],
      { lane: ctx.sessionId },
    );
    const { turnId } = await ctx.env.agent.send(ctx.options(), { text: 'note lunch, wipe, and wait' });
    await pendingCall(ctx);
    await eventually(() => ctx.probe.runs.some((r) => r.tool === 'note') && ctx.probe.runs.some((r) => r.tool === 'sleepy'), 'the note stored and the sleeper running');
    await ctx.env.agent.interrupt(ctx.sessionId, 'stop');
    const result = await ctx.env.agent.waitForTurn(ctx.sessionId, turnId);
    ctx.check(result.outcome === 'interrupted', 'the turn was interrupted');
    const next = await ctx.env.agent.ask(ctx.options(), { text: 'what did you do?' });
    ctx.check(next.turn.text === 'I stored a note.', 'the next turn answered');
    const window = (await ctx.env.agent.getSession(ctx.sessionId)).window[0]!;
    ctx.check(window.messages.filter((m) => m.role === 'tool').length === 3, 'the interrupted turn kept its three calls answered');
  },
});
