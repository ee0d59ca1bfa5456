import { randomBytes } from 'node:crypto';
import { spawn, type ChildProcess } from 'node:child_process';
import { execFile } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { eventually, sessionOptions, startTestEnv, turnCompleted, collectEvents, uniqueId, type TestEnv } from '../support/test-env';
import { historyText } from '../support/history-text';
import { TEST_ENCRYPTION_KEYS } from '../support/test-encryption';
import { DAY, fact, userSource } from '../support/memory-fixtures';
import { MemoryRepository } from '../../activities/memory/memory-repository';
import { keyMaterialStrings } from '../../codec/encryption-keys';
import { resolveStackPaths } from '../../scripts/stack/paths';
import { resolveTemporalBinary } from '../../scripts/stack/temporal-binary';
import { workflowIdFor } from '../../workflows/messages';
import type { ChatRequest } from '../../scripted-model';

const run = promisify(execFile);

// Distinctive strings, each of which a byte search would find if it were stored in clear. Fresh for
// every run: the dev server's database outlives test runs, and an earlier run without encryption
// must not be mistaken for a leak of this one.
const RUN = randomBytes(4).toString('hex');
const USER_TEXT = `UserCanary${RUN} please add one to my locker number`;
const TOOL_ARGUMENT = String(100_000_000 + randomBytes(4).readUInt32BE() % 800_000_000);
const RESULT = String(BigInt(TOOL_ARGUMENT) + 1n);
const MEMORY_VALUE = `MemCanary${RUN}`;
const SECRET = `sk-canary-Secret${RUN}-do-not-store`;
const CANARIES = { USER_TEXT: `UserCanary${RUN}`, TOOL_ARGUMENT, MEMORY_VALUE, SECRET };

let env: TestEnv;
let worker: ChildProcess | undefined;
let workerLog = '';

beforeAll(async () => {
  env = await startTestEnv({ name: 'canary', startWorker: false, configEnv: { OPENAI_API_KEY: SECRET, PAYLOAD_ENCRYPTION_KEYS: TEST_ENCRYPTION_KEYS } });
  expect(env.config.encryption.keys).toBeDefined();
  await new MemoryRepository(env.db).ensureIndexes();
  // The real worker entry point in its own process, so its log is exactly what an operator would collect.
  worker = spawn(process.execPath, ['--import', 'tsx', join(process.cwd(), 'workers/main.ts')], {
    env: {
      ...process.env,
      TEMPORAL_TASK_QUEUE: env.taskQueue,
      MONGODB_DATABASE: env.config.mongodb.database,
      OPENAI_BASE_URL: env.config.model.baseUrl,
      OPENAI_API_KEY: SECRET,
      MODEL_NAME: 'scripted',
      MAINTENANCE_EVERY_MS: '0',
      PAYLOAD_ENCRYPTION_KEYS: env.config.encryption.keys,
      // The memory is seeded with the fixtures' word-hashing vectors, so the worker embeds queries the same way.
      EMBEDDING_MODEL: 'offline-hash',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  worker.stdout?.on('data', (d: Buffer) => (workerLog += d.toString()));
  worker.stderr?.on('data', (d: Buffer) => (workerLog += d.toString()));
  await eventually(() => workerLog.includes('polling task queue') || worker?.exitCode !== null, 'the worker to start polling', 60_000);
  if (!workerLog.includes('polling task queue')) throw new Error(`the worker did not start:\n${workerLog}`);
}, 90_000);

afterAll(async () => {
  if (worker && worker.exitCode === null) {
    const exited = new Promise((resolve) => worker?.once('exit', resolve));
    worker.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([exited, new Promise((resolve) => (timer = setTimeout(resolve, 10_000)))]);
    clearTimeout(timer);
    if (worker.exitCode === null) worker.kill('SIGKILL');
  }
  await env?.close();
});

/** Every canary found in `text`, by name. */
const found = (text: string) => Object.entries(CANARIES).filter(([, value]) => text.includes(value)).map(([name]) => name);

describe('payload encryption, checked with canaries', () => {
  it('keeps user text, tool arguments, memory content and secrets out of history, the server database and worker logs', async () => {
    const sessionId = uniqueId('canary');
    const user = uniqueId('u');
    const now = new Date();
    await new MemoryRepository(env.db)
      .forNamespace({ tenant: 'acme', user })
      .writeFact(fact('locker code', MEMORY_VALUE, { source: userSource('earlier', 'turn-1'), statedAt: now, expiresAt: new Date(now.getTime() + 30 * DAY) }), {
        actor: { by: 'import' },
        now,
      });
    const systemOf = (req: ChatRequest) => String(req.messages[0]?.content ?? '');
    env.model.script(
      [
        {
          // Only once the memory was recalled into the context, so it provably travelled through history.
          match: { where: (req) => systemOf(req).includes(MEMORY_VALUE) },
          respond: { kind: 'tool_calls', calls: [{ id: 'call_canary', name: 'local_calculate', arguments: { expression: `${TOOL_ARGUMENT} + 1` } }] },
        },
        { match: { hasToolResults: true }, respond: { kind: 'text', text: `Your locker number plus one is ${RESULT}.` } },
      ],
      { lane: sessionId },
    );
    // The session's owner sends: only the owner may (issue 12's ownership).
    const agent = env.agent.as({ tenant: 'acme', user });
    const { turnId } = await agent.send(sessionOptions(sessionId, { namespace: { tenant: 'acme', user }, memory: { enabled: true } }), { text: USER_TEXT });
    const events = await collectEvents(agent, sessionId, turnCompleted(turnId), { timeoutMs: 60_000 });
    // The client decrypts: the session reads normally through it.
    expect(events.at(-1)!.event).toMatchObject({ type: 'turn_completed', outcome: 'completed', text: `Your locker number plus one is ${RESULT}.` });
    const view = await agent.getSession(sessionId);
    expect(JSON.stringify(view)).toContain(`UserCanary${RUN}`);
    env.model.assertDone(sessionId);

    // 1. The history as the temporal CLI shows it, with every base64 layer opened.
    const paths = resolveStackPaths();
    const cli = await resolveTemporalBinary(paths, process.env, () => undefined);
    const { stdout } = await run(
      cli.path,
      ['workflow', 'show', '--workflow-id', workflowIdFor(sessionId), '--address', env.config.temporal.address, '--namespace', env.config.temporal.namespace, '--output', 'json'],
      { maxBuffer: 64 * 1024 * 1024 },
    );
    const shown = historyText(JSON.parse(stdout));
    expect(shown).toContain('binary/encrypted');
    expect(found(shown)).toEqual([]);

    // 2. The dev server's SQLite files (database, WAL), byte for byte.
    const dir = dirname(paths.temporalDbFile);
    const readDb = () => readdirSync(dir).filter((f) => f.startsWith('temporal.db')).map((f) => readFileSync(join(dir, f)));
    // Control: the workflow id is stored in clear, so these are the right files and the session is in them.
    const bytes = await eventually(() => {
      const all = readDb();
      return all.some((b) => b.includes(workflowIdFor(sessionId))) ? all : null;
    }, 'the session to reach the database files');
    const inDb = Object.entries(CANARIES).filter(([, value]) => bytes.some((b) => b.includes(value))).map(([name]) => name);
    expect(inDb).toEqual([]);

    // 3. The worker's log, including the configuration it printed at start.
    expect(workerLog).toContain('durable-agent worker starting with');
    expect(found(workerLog)).toEqual([]);
    for (const material of keyMaterialStrings(env.config.encryption.keys!)) expect(workerLog).not.toContain(material);
  }, 120_000);
});
