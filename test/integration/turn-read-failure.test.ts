import type { ActivityInboundCallsInterceptor, ActivityExecuteInput, Next } from '@temporalio/worker';
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { collectEvents, sessionOptions, startTestEnv, turnCompleted, uniqueId, type TestEnv } from '../support/test-env';
import { workflowIdFor } from '../../workflows/messages';

/*
 * A turn starts by reading the day's budget and the tool catalog, in one
 * local activity with a few retries (`readTurnStart`). A read that still
 * fails (MongoDB down for the budget's query) must end that turn as failed,
 * with an error that says what could not be read and what to do, and leave
 * the session running with everything it held. Before the patch
 * `turn-read-failure-ends-turn`, the failure left the workflow and failed
 * the run. (Which of the two reads failed, the activity names in its
 * failure's message: test/unit/turn-start-activity.test.ts.)
 *
 * A fault injector on the worker fails every attempt of the read for the
 * sessions listed in `failing`, as a MongoDB that cannot be reached would.
 */

const failing = new Set<string>();

class FailingRead implements ActivityInboundCallsInterceptor {
  async execute(input: ActivityExecuteInput, next: Next<ActivityInboundCallsInterceptor, 'execute'>): Promise<unknown> {
    const { activityType, workflowExecution } = Context.current().info;
    const sessionId = workflowExecution?.workflowId.replace(/^session-/, '') ?? '';
    if (failing.has(sessionId) && activityType === 'readTurnStart') {
      throw ApplicationFailure.retryable('database down', 'MongoServerSelectionError');
    }
    return next(input);
  }
}

let env: TestEnv;
beforeAll(async () => {
  env = await startTestEnv({
    name: 'turnread',
    workerOptions: { interceptors: { activity: [() => ({ inbound: new FailingRead() })] } },
  });
});
afterAll(async () => {
  await env?.close();
});

it('a turn-start read that fails after its retries ends the turn as failed with an error saying what and why, and the session goes on to the next message', async () => {
  const sessionId = uniqueId('s');
  env.model.script(
    [
      { respond: { kind: 'text', text: 'First.' } },
      { respond: { kind: 'text', text: 'Third.' } },
    ],
    { lane: sessionId },
  );
  const options = sessionOptions(sessionId);
  const first = await env.agent.ask(options, { text: 'one' });
  expect(first.turn.outcome).toBe('completed');

  failing.add(sessionId);
  const second = await env.agent.ask(options, { text: 'two' });
  expect(second.turn).toMatchObject({ turnId: 'turn-2', outcome: 'failed', modelCalls: 0, toolCalls: 0 });
  expect(second.turn.error).toContain('TurnReadFailed');
  expect(second.turn.error).toContain("The turn could not start: reading the day's budget and the tool catalog failed (database down)");
  expect(second.turn.error).toContain('send the message again');
  // The model was not called for the failed turn.
  expect(env.model.requestsFor(sessionId)).toHaveLength(1);

  const events = await collectEvents(env.agent, sessionId, turnCompleted('turn-2'));
  const error = events.map((e) => e.event).find((e) => e.type === 'error' && e.turnId === 'turn-2');
  expect(error).toMatchObject({ type: 'error', errorType: 'TurnReadFailed' });

  // The run did not fail: the same run takes the next message, with the earlier turns still in its window.
  const handle = env.agent.client.workflow.getHandle(workflowIdFor(sessionId));
  const before = await handle.describe();
  expect(before.status.name).toBe('RUNNING');
  failing.delete(sessionId);
  const third = await env.agent.ask(options, { text: 'three' });
  expect(third.turn).toMatchObject({ turnId: 'turn-3', outcome: 'completed', text: 'Third.' });
  const after = await handle.describe();
  expect(after.runId).toBe(before.runId);
  const view = await env.agent.getSession(sessionId);
  expect(view.window.map((t) => [t.turnId, t.outcome])).toEqual([
    ['turn-1', 'completed'],
    ['turn-2', 'failed'],
    ['turn-3', 'completed'],
  ]);
});
