import { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow';
import { SessionBusyError } from '../../client';
import { sessionOptions, startTestEnv, collectEvents, turnCompleted, uniqueId, type TestEnv } from '../support/test-env';
import { isSummaryRequest, scriptedSummary } from '../support/scripted-summarizer';
import { workflowIdFor } from '../../workflows/messages';
import type { ChatRequest, StepResponse } from '../../scripted-model';

const HISTORY_BUDGET = 600;
const TURNS = 300;

/** A model that answers every turn at once and summarizes when asked. */
function answerEverything(req: ChatRequest): StepResponse {
  if (isSummaryRequest(req)) return scriptedSummary(req);
  const last = String(req.messages.at(-1)?.content ?? '');
  return { kind: 'text', text: `ack: ${last}` };
}

let env: TestEnv;
beforeAll(async () => {
  env = await startTestEnv({ name: 'long', modelFallback: answerEverything });
});
afterAll(async () => {
  await env?.close();
});

describe('a 300-turn session', () => {
  it('keeps every run under the history budget and loses nothing across continue-as-new', async () => {
    const sessionId = uniqueId('s');
    const options = sessionOptions(sessionId, { limits: { maxHistoryEvents: HISTORY_BUDGET } });
    for (let i = 1; i <= TURNS; i++) {
      const text = i === 1 ? 'The launch deadline is 2027-01-15. Track it as OPS-77.' : `message ${i}`;
      // One update per turn that answers when the turn is done (half the round trips of send, then waitForTurn).
      const { version, turn } = await env.agent.ask(options, { text, clientMessageId: `m${i}` });
      expect(version).toBe(i);
      expect(turn.outcome).toBe('completed');
    }
    const view = await env.agent.getSession(sessionId);
    expect(view.version).toBe(TURNS);
    expect(view.counters.turns).toBe(TURNS);
    expect(view.counters.continuedAsNew).toBeGreaterThanOrEqual(3);
    expect(view.window.length).toBeLessThanOrEqual(20);
    // The pinned facts from turn 1 are still there at turn 300.
    expect(view.keyFacts.map((f) => f.subject)).toEqual(expect.arrayContaining(['deadline', 'ticket ops']));
    // The last model request still carries them.
    const last = env.model.requests.filter((r) => !isSummaryRequest(r.body as ChatRequest)).at(-1)!.body as ChatRequest;
    expect(String(last.messages[0]?.content)).toMatch(/deadline: The launch deadline is 2027-01-15/);
    // clientMessageId de-duplication survived the continue-as-new boundaries.
    const dup = await env.agent.send(options, { text: 'message 299', clientMessageId: 'm299' });
    expect(dup.version).toBe(299);

    // Every run of the chain stayed under the budget.
    const runs: number[] = [];
    for await (const wf of env.client.workflow.list({ query: `WorkflowId = '${workflowIdFor(sessionId)}'` })) {
      runs.push(wf.historyLength);
    }
    expect(runs.length).toBe(view.counters.continuedAsNew + 1);
    expect(Math.max(...runs)).toBeLessThanOrEqual(HISTORY_BUDGET);

    // The event stream was carried across continue-as-new: offsets kept counting and the last turns are readable.
    const offset = await env.client.workflow.getHandle(workflowIdFor(sessionId)).query<number>('__temporal_workflow_stream_offset');
    expect(offset).toBeGreaterThan(TURNS * 3);
    const events = await collectEvents(env.agent, sessionId, turnCompleted(`turn-${TURNS}`), { fromOffset: offset - 40 });
    expect(events.at(-1)?.event).toMatchObject({ type: 'turn_completed', turnId: `turn-${TURNS}`, version: TURNS });
  }, 300_000);
});

it('continues as new with the options it parsed: fields it does not know are not carried to the next run', async () => {
  const sessionId = uniqueId('s');
  const options = sessionOptions(sessionId, { limits: { maxHistoryEvents: 200 } });
  const handle = env.client.workflow.getHandle(workflowIdFor(sessionId));
  // Another client's start, with a field the session does not know (it could be most of the 2 MB an input takes).
  await env.client.workflow.start('agentSession', { workflowId: workflowIdFor(sessionId), taskQueue: env.taskQueue, args: [{ options: { ...options, attachments: 'x'.repeat(50_000) } }] });
  const firstRun = (await handle.describe()).runId;
  for (let i = 1; i <= 40 && (await handle.describe()).runId === firstRun; i++) await env.agent.ask(options, { text: `message ${i}` });
  const next = await handle.describe();
  expect(next.runId).not.toBe(firstRun);
  const started = (await handle.fetchHistory()).events?.[0]?.workflowExecutionStartedEventAttributes;
  const input = await decodeFromPayloadsAtIndex<{ options: Record<string, unknown> }>(env.client.options.loadedDataConverter, 0, started?.input?.payloads);
  expect(input.options.sessionId).toBe(sessionId);
  expect(Object.keys(input.options)).not.toContain('attachments');
  await env.agent.end(sessionId);
}, 120_000);

it('a steady stream of queued messages: past twice its history budget the run continues as new with the messages still waiting, and every one is answered', async () => {
  const sessionId = uniqueId('s');
  const options = sessionOptions(sessionId, { busyPolicy: 'queue', limits: { maxHistoryEvents: 200 } });
  const first = await env.agent.ask(options, { text: 'message 0' });
  expect(first.turn.outcome).toBe('completed');
  // 90 more, each sent as soon as the one before is accepted: faster than turns run, so the queue never empties.
  // Past 32 waiting, the session answers SessionBusyError and the sender tries again shortly.
  const sent: Array<{ turnId: string }> = [];
  for (let i = 1; i <= 90; i++) {
    for (;;) {
      try {
        sent.push(await env.agent.send(options, { text: `message ${i}`, clientMessageId: `q${i}` }));
        break;
      } catch (err) {
        if (!(err instanceof SessionBusyError)) throw err;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
  }
  expect(sent.at(-1)?.turnId).toBe('turn-91');
  expect((await env.agent.waitForTurn(sessionId, 'turn-91')).outcome).toBe('completed');
  const view = await env.agent.getSession(sessionId);
  expect({ version: view.version, turns: view.counters.turns }).toEqual({ version: 91, turns: 91 });
  const runs: number[] = [];
  for await (const wf of env.client.workflow.list({ query: `WorkflowId = '${workflowIdFor(sessionId)}'` })) runs.push(wf.historyLength);
  // Before, the run waited for an empty queue: with messages arriving as fast as turns ran it never came, and the run
  // would have gone on to the server's own limit. Now no run passes twice its budget by more than one turn.
  expect(runs.length).toBeGreaterThanOrEqual(2);
  expect(Math.max(...runs)).toBeLessThanOrEqual(2 * 200 + 60);
  await env.agent.end(sessionId);
}, 120_000);
