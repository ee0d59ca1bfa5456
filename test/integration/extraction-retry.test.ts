import type { ActivityInboundCallsInterceptor, ActivityExecuteInput, Next } from '@temporalio/worker';
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { ExtractMemoriesInput } from '../../activities/memory/memory-activity-types';
import { collectEvents, eventually, sessionOptions, startTestEnv, turnCompleted, uniqueId, type TestEnv } from '../support/test-env';

/*
 * Memory extraction runs in the background after turns, an activity with a
 * few retries. A pass that still fails must not lose its turns: they go
 * into the next pass, once (patch `extraction-retried-once`). A fault
 * injector fails every attempt of the passes it is told to, as a model
 * that cannot be reached would, and notes each pass's turns.
 */

/** Per session, how many passes fail (every attempt of each). */
const failingPasses = new Map<string, number>();
const passes: Array<{ sessionId: string; attempt: number; turns: string[]; failed: boolean }> = [];

class FailingExtraction implements ActivityInboundCallsInterceptor {
  async execute(input: ActivityExecuteInput, next: Next<ActivityInboundCallsInterceptor, 'execute'>): Promise<unknown> {
    const { activityType, attempt } = Context.current().info;
    if (activityType !== 'extractMemories') return next(input);
    const arg = input.args[0] as ExtractMemoriesInput;
    const left = failingPasses.get(arg.sessionId) ?? 0;
    const failed = left > 0;
    passes.push({ sessionId: arg.sessionId, attempt, turns: arg.turns.map((t) => t.turnId), failed });
    if (failed) {
      if (attempt >= 3) failingPasses.set(arg.sessionId, left - 1);
      throw ApplicationFailure.retryable('the model is unreachable', 'ModelUnavailable');
    }
    return next(input);
  }
}

let env: TestEnv;
beforeAll(async () => {
  env = await startTestEnv({ name: 'extractretry', configEnv: { EMBEDDING_MODEL: 'offline-hash' }, workerOptions: { interceptors: { activity: [() => ({ inbound: new FailingExtraction() })] } } });
});
afterAll(async () => {
  await env?.close();
});

const lastAttempts = (sessionId: string) => passes.filter((p) => p.sessionId === sessionId && (p.failed ? p.attempt === 3 : true));

it("a failed extraction pass's turns go into the next pass, once: a second failure lets them go", async () => {
  const sessionId = uniqueId('s');
  const noCandidates = { respond: { kind: 'json' as const, value: { candidates: [] } } };
  env.model.script(
    [
      { respond: { kind: 'text', text: 'One.' } },
      { respond: { kind: 'text', text: 'Two.' } },
      { respond: { kind: 'text', text: 'Three.' } },
      // The third pass's request, the only one that reaches the model.
      noCandidates,
    ],
    { lane: sessionId },
  );
  const options = sessionOptions(sessionId, { memory: { enabled: true, extractEveryTurns: 1 } });
  // The first two passes fail: turn-1's pass, then the pass that tries turn-1 again with turn-2.
  failingPasses.set(sessionId, 2);
  await env.agent.ask(options, { text: 'one' });
  await eventually(async () => (lastAttempts(sessionId).length >= 1 ? true : null), 'the first pass to fail');
  await env.agent.ask(options, { text: 'two' });
  await eventually(async () => (lastAttempts(sessionId).length >= 2 ? true : null), 'the second pass to fail');
  await env.agent.ask(options, { text: 'three' });
  await eventually(async () => (lastAttempts(sessionId).length >= 3 ? true : null), 'the third pass');

  expect(lastAttempts(sessionId).map((p) => [p.turns, p.failed])).toEqual([
    [['turn-1'], true],
    // turn-1 is tried once more, with the turn that came next.
    [['turn-1', 'turn-2'], true],
    // turn-1 has had its second pass; turn-2 has its second.
    [['turn-2', 'turn-3'], false],
  ]);
  const events = await collectEvents(env.agent, sessionId, turnCompleted('turn-3'));
  const errors = events.map((e) => e.event).filter((e) => e.type === 'error' && e.errorType === 'MemoryExtractionFailed');
  expect(errors.map((e) => (e as { message: string }).message)).toEqual([
    expect.stringMatching(/the model is unreachable; its 1 turn\(s\) go into the next pass$/),
    expect.stringMatching(/the model is unreachable; its 1 turn\(s\) go into the next pass$/),
  ]);
  // The third pass ran through: its extraction is counted, and the model answered every scripted request.
  await eventually(async () => ((await env.agent.getSession(sessionId)).counters.memoryExtractions === 1 ? true : null), 'the third pass counted');
  env.model.assertDone(sessionId);
}, 60_000);
