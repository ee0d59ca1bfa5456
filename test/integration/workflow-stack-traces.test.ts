import { sessionOptions, startTestEnv, uniqueId, type TestEnv } from '../support/test-env';
import { workflowIdFor } from '../../workflows/messages';

/*
 * WORKFLOW_STACK_TRACES decides whether the SDK records a stack trace for
 * every promise of the session workflows (workers/workflow-bundle.ts,
 * workers/sandbox/). Off (the default, and the suite's prebuilt bundle), the
 * worker's threads run without the SDK's promise hook and the `__stack_trace`
 * query (the Web UI's "Stack Trace" tab) says stack traces are off; with the
 * SDK's own threads (WORKFLOW_DEADLOCK_CHECK=call) it has no frames; on, it
 * shows where the session waits, in the session's own source files.
 */

const answer = () => ({ kind: 'text' as const, text: 'ok' });

/** Starts a session, lets it answer once, and returns what `__stack_trace` says while it waits for the next message. */
async function stackOfIdleSession(env: TestEnv): Promise<string> {
  const sessionId = uniqueId('s');
  const { turn } = await env.agent.ask(sessionOptions(sessionId), { text: 'hello' });
  expect(turn.outcome).toBe('completed');
  return env.client.workflow.getHandle(workflowIdFor(sessionId)).query<string>('__stack_trace');
}

/** Frames that name the session's workflow code (source-mapped paths under workflows/). */
const sessionFrames = (stack: string): string[] => stack.split('\n').filter((line) => /^\s*at .*workflows\/[\w-]+\.ts:\d+/.test(line));

describe('stack traces of session workflows', () => {
  it('are off by default: the __stack_trace query says so, and the session goes on', async () => {
    const env = await startTestEnv({ name: 'stack-off', modelFallback: answer });
    try {
      await expect(stackOfIdleSession(env)).rejects.toThrow(/stack traces are not enabled on this worker/);
      const sessionId = uniqueId('s');
      const { turn } = await env.agent.ask(sessionOptions(sessionId), { text: 'after the query' });
      expect(turn.outcome).toBe('completed');
    } finally {
      await env.close();
    }
  });

  it("are off with the SDK's own threads too: the __stack_trace query has no frames", async () => {
    const env = await startTestEnv({ name: 'stack-off-sdk', modelFallback: answer, configEnv: { WORKFLOW_DEADLOCK_CHECK: 'call' } });
    try {
      const stack = await stackOfIdleSession(env);
      expect(stack).not.toMatch(/^\s*at /m);
    } finally {
      await env.close();
    }
  });

  it('with WORKFLOW_STACK_TRACES=true the query shows where the session waits, in its own files', async () => {
    const env = await startTestEnv({ name: 'stack-on', modelFallback: answer, bundleAtStart: true, configEnv: { WORKFLOW_STACK_TRACES: 'true' } });
    try {
      const stack = await stackOfIdleSession(env);
      expect(sessionFrames(stack).length).toBeGreaterThan(0);
      // An idle session waits for its next message or its idle deadline (workflows/idle-deadline.ts).
      expect(stack).toMatch(/agentSession|session-run|IdleDeadline|idle-deadline/);
    } finally {
      await env.close();
    }
  }, 120_000);
});
