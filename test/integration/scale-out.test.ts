import type { ChildProcess } from 'node:child_process';
import { temporal } from '@temporalio/proto';
import { startCrashWorker } from '../support/crash-worker-process';
import { collectEvents, eventually, sessionOptions, startTestEnv, turnCompleted, uniqueId, type TestEnv } from '../support/test-env';
import { SIDE_EFFECTS } from '../support/side-effect-tool';
import { isSummaryRequest, scriptedSummary } from '../support/scripted-summarizer';
import { lastUserMessage, type ChatRequest, type StepResponse } from '../../scripted-model';
import { workflowIdFor } from '../../workflows/messages';

const WORKERS = ['scale-a', 'scale-b', 'scale-c'];
const SESSIONS = 12;
/** Long enough to see a write running on the doomed worker and kill it there, short enough to keep the file fast. */
const WRITE_HOLD_MS = 2_500;
/** The killed worker's sessions move to the others after this (the default, 10 s, would only make the file slower). */
const STICKY_QUEUE_TIMEOUT_MS = 2_000;

const answerTo = (text: string): string => `done: ${text}`;
/** The idempotency key of the write in a session's turn (step 1, the scripted call id). */
const writeKey = (sessionId: string, turn: number): string => `${sessionId}:turn-${turn}:1:call_write`;

/**
 * Every turn makes one tool call, then answers with the message it answers.
 * The reply depends on the request alone, so a model call retried on another
 * worker after the crash gets the same reply as the first attempt.
 */
function oneToolThenAnswer(req: ChatRequest): StepResponse {
  if (isSummaryRequest(req)) return scriptedSummary(req);
  const text = lastUserMessage(req) ?? '';
  if (req.messages.at(-1)?.role === 'tool') return { kind: 'text', text: answerTo(text) };
  return text.startsWith('record')
    ? { kind: 'tool_calls', calls: [{ id: 'call_write', name: 'local_slow_write', arguments: { label: text } }] }
    : { kind: 'tool_calls', calls: [{ id: 'call_calc', name: 'local_calculate', arguments: { expression: '6 * 7' } }] };
}

let env: TestEnv;
const children: ChildProcess[] = [];
const workerByIdentity = new Map<string, ChildProcess>();

beforeAll(async () => {
  env = await startTestEnv({ name: 'scale', startWorker: false, modelFallback: oneToolThenAnswer });
  await Promise.all(
    WORKERS.map(async (identity) => {
      const proc = await startCrashWorker(env, {
        TEST_WORKER_IDENTITY: identity,
        TEST_SLOW_WRITE_HOLD_MS: String(WRITE_HOLD_MS),
        WORKER_STICKY_QUEUE_TIMEOUT_MS: String(STICKY_QUEUE_TIMEOUT_MS),
      }, children);
      workerByIdentity.set(identity, proc);
    }),
  );
  // Three processes loading the worker at once on two cores: slow on a busy machine.
}, 90_000);

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await env?.close();
});

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

async function historyOf(sessionId: string): Promise<HistoryEvent[]> {
  const history = await env.client.workflow.getHandle(workflowIdFor(sessionId)).fetchHistory();
  return history.events ?? [];
}

/** The worker identities on a session's completed workflow tasks and started activities, in history order. */
const identitiesIn = (events: HistoryEvent[]): string[] =>
  events.flatMap((e) => e.workflowTaskCompletedEventAttributes?.identity ?? e.activityTaskStartedEventAttributes?.identity ?? []);

/** The worker that completed the session's last workflow task: the one holding it in its sticky cache. */
const holderOf = (events: HistoryEvent[]): string | undefined =>
  events.flatMap((e) => e.workflowTaskCompletedEventAttributes?.identity ?? []).at(-1) ?? undefined;

/** Sessions whose tool call is running on `identity` now, as the server sees their pending activities. */
async function toolRunningOn(identity: string, sessionIds: string[]): Promise<string[]> {
  const described = await Promise.all(sessionIds.map(async (id) => [id, await env.client.workflow.getHandle(workflowIdFor(id)).describe()] as const));
  return described
    .filter(([, d]) =>
      (d.raw.pendingActivities ?? []).some(
        (a) => a.activityType?.name === 'executeTool' && a.lastWorkerIdentity === identity && a.state === temporal.api.enums.v1.PendingActivityState.PENDING_ACTIVITY_STATE_STARTED,
      ),
    )
    .map(([id]) => id);
}

/** Sends turn `n` of every session at once through the client, and resolves when every one has answered. */
async function turnEverywhere(sessionIds: string[], n: number, text: (sessionId: string) => string) {
  return Promise.all(
    sessionIds.map(async (sessionId) => {
      const sent = text(sessionId);
      const { version, turn } = await env.agent.ask(sessionOptions(sessionId), { text: sent, clientMessageId: `${sessionId}-m${n}` });
      return { sessionId, sent, version, turn };
    }),
  );
}

function expectAnswered(results: Awaited<ReturnType<typeof turnEverywhere>>, n: number): void {
  for (const { sent, version, turn } of results) {
    expect({ version, turnId: turn.turnId, outcome: turn.outcome, text: turn.text, toolCalls: turn.toolCalls }).toEqual({
      version: n,
      turnId: `turn-${n}`,
      outcome: 'completed',
      text: answerTo(sent),
      toolCalls: 1,
    });
  }
}

describe('three workers on one task queue', () => {
  it('spread a dozen concurrent sessions, and when one is SIGKILLed mid-turn the other two finish its turns once and carry on', async () => {
    const sessionIds = Array.from({ length: SESSIONS }, () => uniqueId('s'));

    // Turn 1 everywhere at once, with a tool call each.
    expectAnswered(await turnEverywhere(sessionIds, 1, (id) => `add up 1 for ${id}`), 1);

    const before = new Map(await Promise.all(sessionIds.map(async (id) => [id, await historyOf(id)] as const)));
    const seen = new Set([...before.values()].flatMap(identitiesIn));
    expect([...seen].every((identity) => WORKERS.includes(identity))).toBe(true);
    expect(seen.size).toBeGreaterThan(1);

    // The worker holding the most sessions dies while a side-effecting tool call runs on it.
    const holders = new Map(sessionIds.map((id) => [id, holderOf(before.get(id)!)]));
    const counts = WORKERS.map((w) => [w, [...holders.values()].filter((h) => h === w).length] as const);
    const [victim] = counts.reduce((best, c) => (c[1] > best[1] ? c : best));
    const victimSessions = sessionIds.filter((id) => holders.get(id) === victim);

    const second = turnEverywhere(sessionIds, 2, (id) => `record 2 for ${id}`);
    second.catch(() => undefined);
    const interrupted = await eventually(async () => {
      const running = await toolRunningOn(victim, sessionIds);
      return running.length > 0 ? running : undefined;
    }, `a write running on ${victim}`, 60_000);
    const proc = workerByIdentity.get(victim)!;
    const exited = new Promise((resolve) => proc.once('exit', resolve));
    proc.kill('SIGKILL');
    await exited;

    expectAnswered(await second, 2);
    // The next turn answers too, on the two workers left.
    expectAnswered(await turnEverywhere(sessionIds, 3, (id) => `add up 3 for ${id}`), 3);

    // Each write happened once, under the key of its session's one turn 2; those cut off by the kill ran again.
    const effects = env.db.collection<{ _id: string }>(SIDE_EFFECTS);
    const writes = await effects.find({}).sort({ _id: 1 }).toArray();
    expect(writes.map((w) => w._id)).toEqual(sessionIds.map((id) => writeKey(id, 2)).sort());
    const after = new Map(await Promise.all(sessionIds.map(async (id) => [id, await historyOf(id)] as const)));
    for (const id of interrupted) {
      const retried = after.get(id)!.filter((e) => (e.activityTaskStartedEventAttributes?.attempt ?? 1) > 1);
      expect(retried.length).toBeGreaterThan(0);
    }
    for (const id of sessionIds) {
      const events = after.get(id)!;
      // A workflow task failure is a bug; a sticky task timing out after the crash is not.
      expect(events.filter((e) => e.workflowTaskFailedEventAttributes)).toEqual([]);
      expect(identitiesIn(events).every((identity) => WORKERS.includes(identity))).toBe(true);
    }
    // The killed worker's sessions were finished by the others.
    for (const id of victimSessions) expect(holderOf(after.get(id)!)).not.toBe(victim);

    // Every turn answered exactly once, in order, on every session.
    await Promise.all(
      sessionIds.map(async (id) => {
        const events = await collectEvents(env.agent, id, turnCompleted('turn-3'), { fromOffset: 0 });
        const completed = events.flatMap(({ event }) => (event.type === 'turn_completed' ? [event.turnId] : []));
        expect(completed).toEqual(['turn-1', 'turn-2', 'turn-3']);
        const view = await env.agent.getSession(id);
        expect({ version: view.version, turns: view.counters.turns, toolCalls: view.counters.toolCalls }).toEqual({ version: 3, turns: 3, toolCalls: 3 });
      }),
    );
    env.model.assertDone();
  }, 180_000);
});
