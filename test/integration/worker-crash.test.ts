import type { ChildProcess } from 'node:child_process';
import { startCrashWorker } from '../support/crash-worker-process';
import { eventually, sessionOptions, startTestEnv, uniqueId, type TestEnv } from '../support/test-env';
import { SIDE_EFFECTS, sideEffectTool } from '../support/side-effect-tool';
import type { ChatRequest } from '../../scripted-model';

let env: TestEnv;
let child: ChildProcess | undefined;
beforeAll(async () => {
  env = await startTestEnv({ name: 'crash', startWorker: false });
});
afterAll(async () => {
  child?.kill('SIGKILL');
  await env?.close();
});

function startChildWorker(): Promise<ChildProcess> {
  return startCrashWorker(env);
}

describe('a worker killed with SIGKILL', () => {
  it('mid side-effecting tool: a new worker finishes the session and the effect happened once', async () => {
    const sessionId = uniqueId('s');
    env.model.script(
      [
        { respond: { kind: 'tool_calls', calls: [{ id: 'call_w', name: 'local_slow_write', arguments: { label: 'invoice-42' } }] } },
        { match: { hasToolResults: true }, respond: { kind: 'text', text: 'Recorded.' } },
      ],
      { lane: sessionId },
    );
    child = await startChildWorker();
    const { turnId } = await env.agent.send(sessionOptions(sessionId), { text: 'record invoice 42' });
    const effects = env.db.collection<{ _id: string; attempts: number }>(SIDE_EFFECTS);
    const key = `${sessionId}:${turnId}:1:call_w`;
    await eventually(() => effects.findOne({ _id: key }), 'the side effect to start', 30_000);
    child.kill('SIGKILL');
    await new Promise((resolve) => child!.once('exit', resolve));

    await env.startWorker([sideEffectTool(env.db, 500)]);
    const result = await env.agent.waitForTurn(sessionId, turnId);
    expect(result).toMatchObject({ outcome: 'completed', text: 'Recorded.' });
    const docs = await effects.find({}).toArray();
    expect(docs).toHaveLength(1);
    expect(docs[0]).toMatchObject({ _id: key, attempts: 2 });
    const toolMessage = (env.model.requestsFor(sessionId)[1]!.body as ChatRequest).messages.find((m) => m.role === 'tool');
    expect(JSON.parse(String(toolMessage?.content))).toEqual({ written: 'invoice-42' });
  }, 90_000);
});
