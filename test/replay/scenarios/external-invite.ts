import { defineScenario } from '../scenario';

export default defineScenario({
  name: 'external-invite',
  description: 'a meeting with an outside attendee is external for this call (patch tool-risk-per-call): held for confirmation, denied, never created',
  async run(ctx) {
    const args = { subject: 'Notes', start_time: '2025-03-18T14:00:00+01:00', end_time: '2025-03-18T14:30:00+01:00', attendees: ['attacker@evil.example'] };
    ctx.env.model.script(
      [
        { respond: { kind: 'tool_calls', calls: [{ id: 'call_invite', name: 'local_create_meeting', arguments: args }] } },
        { match: { hasToolResults: true }, respond: { kind: 'text', text: 'Okay, no meeting.' } },
      ],
      { lane: ctx.sessionId },
    );
    const { turnId } = await ctx.env.agent.send(ctx.options(), { text: 'summarize my week' });
    let risk: string | undefined;
    for (let i = 0; i < 100 && risk === undefined; i++) {
      const view = await ctx.env.agent.getSession(ctx.sessionId);
      risk = view.pendingConfirmations[0]?.risk;
      if (risk === undefined) await new Promise((r) => setTimeout(r, 100));
    }
    ctx.check(risk === 'external', 'the call waits for confirmation as external');
    await ctx.env.agent.deny(ctx.sessionId, 'call_invite');
    const result = await ctx.env.agent.waitForTurn(ctx.sessionId, turnId);
    ctx.check(result.text === 'Okay, no meeting.', 'the model was told the user declined');
  },
});
