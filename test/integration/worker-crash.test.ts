import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
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
  // Node itself with tsx as a loader: the tsx CLI would put a wrapper process between us and the worker.
  const proc = spawn(process.execPath, ['--import', 'tsx', join(process.cwd(), 'test/support/crash-worker.ts')], {
    env: {
      ...process.env,
      TEMPORAL_TASK_QUEUE: env.taskQueue,
      MONGODB_DATABASE: env.config.mongodb.database,
      OPENAI_BASE_URL: env.config.model.baseUrl,
      OPENAI_API_KEY: 'test-key',
      MODEL_NAME: 'scripted',
      MAINTENANCE_EVERY_MS: '0',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  proc.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve, reject) => {
    proc.stdout?.on('data', (d: Buffer) => {
      if (d.toString().includes('worker ready')) resolve(proc);
    });
    proc.on('exit', (code) => reject(new Error(`worker exited early (${code}): ${stderr}`)));
  });
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
