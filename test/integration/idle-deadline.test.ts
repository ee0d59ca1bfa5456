import type { temporal } from '@temporalio/proto';
import { sessionOptions, startTestEnv, uniqueId, type TestEnv } from '../support/test-env';
import { workflowIdFor } from '../../workflows/messages';
import type { agentSession } from '../../workflows/agent-session';

let env: TestEnv;
beforeAll(async () => {
  env = await startTestEnv({ name: 'idle-deadline' });
});
afterAll(async () => {
  await env?.close();
});

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;
const millis = (e: HistoryEvent | undefined): number => {
  const t = e?.eventTime;
  return Number(t?.seconds ?? 0) * 1000 + Math.floor((t?.nanos ?? 0) / 1e6);
};
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('the idle timeout across turns', () => {
  it('keeps one timer for several turns and still ends the session idleTimeoutMs after its last wait began', async () => {
    const sessionId = uniqueId('s');
    const idleTimeoutMs = 3_000;
    const options = sessionOptions(sessionId, { limits: { idleTimeoutMs } });
    const turns = 5;
    env.model.script(
      Array.from({ length: turns }, (_, i) => ({ respond: { kind: 'text' as const, text: `answer ${i + 1}` } })),
      { lane: sessionId },
    );
    // Turns 200 ms apart, all inside one timeout: the first timer fires while the session waits after a later
    // turn, and must start another for the rest of that wait.
    for (let i = 1; i <= turns; i++) {
      const { turnId } = await env.agent.send(options, { text: `message ${i}` });
      expect(await env.agent.waitForTurn(sessionId, turnId)).toMatchObject({ outcome: 'completed' });
      if (i < turns) await pause(200);
    }
    const handle = env.client.workflow.getHandle<typeof agentSession>(workflowIdFor(sessionId));
    expect(await handle.result()).toMatchObject({ status: 'archived' });

    const events = (await handle.fetchHistory()).events ?? [];
    const typed = (attr: keyof HistoryEvent) => events.filter((e) => e[attr] != null);
    const started = typed('timerStartedEventAttributes');
    const fired = typed('timerFiredEventAttributes');
    // No turn cancels a timer (a timer per wait was started and cancelled by every message).
    expect(typed('timerCanceledEventAttributes')).toHaveLength(0);
    // One timer, and one more for the rest of the last wait (a few more only if the turns took seconds each).
    expect(started.length).toBeGreaterThanOrEqual(2);
    expect(started.length).toBeLessThan(turns);
    expect(fired).toHaveLength(started.length);

    // The wait that ended the session began when the last turn completed, and lasted the whole timeout.
    const lastTurnDone = typed('workflowExecutionUpdateCompletedEventAttributes').at(-1);
    const lastFired = fired.at(-1);
    expect(millis(lastFired) - millis(lastTurnDone)).toBeGreaterThanOrEqual(idleTimeoutMs - 50);
    env.model.assertDone(sessionId);
  });

  it('writes the memo version once a turn, when the turn ends', async () => {
    const sessionId = uniqueId('s');
    const options = sessionOptions(sessionId);
    env.model.script(
      [{ respond: { kind: 'text', text: 'one' } }, { respond: { kind: 'text', text: 'two' } }, { respond: { kind: 'text', text: 'three' } }],
      { lane: sessionId },
    );
    for (let i = 1; i <= 3; i++) {
      const { turnId } = await env.agent.send(options, { text: `message ${i}` });
      await env.agent.waitForTurn(sessionId, turnId);
    }
    const handle = env.client.workflow.getHandle(workflowIdFor(sessionId));
    expect((await handle.describe()).memo).toMatchObject({ version: 3, lastTurn: 'turn-3' });
    const memoWrites = ((await handle.fetchHistory()).events ?? [])
      .map((e) => Object.keys(e.workflowPropertiesModifiedEventAttributes?.upsertedMemo?.fields ?? {}))
      .filter((keys) => keys.includes('version'));
    // One per turn, each with the turn it followed; none when a message was accepted.
    expect(memoWrites.filter((keys) => keys.includes('lastTurn'))).toHaveLength(3);
    expect(memoWrites.filter((keys) => !keys.includes('lastTurn') && !keys.includes('status'))).toHaveLength(0);
    await env.agent.end(sessionId);
    await handle.result();
  });
});
