import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { MongoClient } from 'mongodb';
import { ensureStack, stackStatus, stopStack, type StackInfo, type StackStatus } from '../scripts/stack';
import { PortInUseError } from '../scripts/stack/errors';
import { findOnPath, isExecutableFile, isRunning } from '../scripts/stack/processes';
import { freePort } from './support/net';

// These tests use the shared stack (started by global setup or by beforeAll)
// and never stop it; anything they start lives in a temporary data dir on
// ports of its own and is stopped again here.

const ROOT = process.cwd();
const TSX_CLI = require.resolve('tsx/cli');
const quiet = (): void => undefined;
const tempDirs: string[] = [];

function tempDataDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'durable-agent-stack-test-'));
  tempDirs.push(dir);
  return dir;
}

function envWith(overrides: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  // Test processes run with payload encryption on, which makes a stack start a codec server for
  // its UI too; these tests are about the servers (the codec server has its own test, web-ui-codec).
  delete env.PAYLOAD_ENCRYPTION_KEYS;
  for (const [key, value] of Object.entries(overrides)) {
    if (value === undefined) delete env[key];
    else env[key] = value;
  }
  return env;
}

/**
 * The environment `stack:up` would see. Global setup exports the stack's own
 * addresses as TEMPORAL_ADDRESS / MONGODB_URI for the other tests; when they
 * point at servers our state file records, drop them so that ensureStack goes
 * through its pid and state-file path instead of treating them as external.
 */
async function stackUpEnv(): Promise<NodeJS.ProcessEnv> {
  const env = envWith({});
  const recorded = await stackStatus({ env: envWith({ TEMPORAL_ADDRESS: undefined, MONGODB_URI: undefined }) });
  const running = recorded.components.filter((component) => component.state === 'running');
  if (running.some((component) => component.name === 'temporal' && component.address === env.TEMPORAL_ADDRESS)) delete env.TEMPORAL_ADDRESS;
  if (running.some((component) => component.name === 'mongo' && component.address === env.MONGODB_URI)) delete env.MONGODB_URI;
  return env;
}

function pidsOf(status: StackStatus): Record<string, number | null> {
  return Object.fromEntries(status.components.map((component) => [`${component.name}/${component.kind}`, component.pid]));
}

/** A listener that is not ours, as another program on the machine would hold it. */
function holdPort(): Promise<{ port: number; close: () => Promise<void> }> {
  return new Promise((resolve, reject) => {
    const server = net.createServer((socket) => socket.destroy());
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      resolve({ port, close: () => new Promise((done) => server.close(() => done())) });
    });
  });
}

function runStackCli(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [TSX_CLI, 'scripts/stack.ts', ...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

async function withMongo<T>(uri: string, use: (client: MongoClient) => Promise<T>): Promise<T> {
  const client = new MongoClient(uri, { serverSelectionTimeoutMS: 5_000 });
  try {
    await client.connect();
    return await use(client);
  } finally {
    await client.close();
  }
}

/** A real temporal CLI, as ensureStack would find it; null when none is installed yet. */
function installedTemporalCli(): string | null {
  const candidates = [
    process.env.TEMPORAL_CLI_PATH,
    findOnPath('temporal'),
    path.join(ROOT, '.tools/venv/bin/temporal'),
    path.join(ROOT, '.tools/bin/temporal'),
  ];
  return candidates.find((candidate): candidate is string => !!candidate && isExecutableFile(candidate)) ?? null;
}

/** Prints SQLite's plan for FerretDB's lookup by _id in the one collection table of a database file (argv[1]). */
const SQLITE_PLAN = [
  'import sqlite3, sys',
  "c = sqlite3.connect('file:' + sys.argv[1] + '?mode=ro', uri=True)",
  "t = c.execute('SELECT table_name FROM _ferretdb_collections').fetchone()[0]",
  `print(c.execute('EXPLAIN QUERY PLAN SELECT _ferretdb_sjson FROM "%s" WHERE _ferretdb_sjson->\\'$._id\\' = ?' % t, ('"a"',)).fetchall()[0][3])`,
].join('\n');

function notes(client: MongoClient) {
  return client.db('stack_test').collection<{ _id: string; text: string }>('notes');
}

let shared: StackInfo;

beforeAll(async () => {
  // A no-op when global setup already brought the stack up; a cold first start
  // (install and build) can take minutes.
  shared = await ensureStack({ log: quiet, env: await stackUpEnv() });
}, 20 * 60_000);

afterAll(() => {
  for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true });
});

describe('ensureStack on a running stack', () => {
  it('starts nothing and keeps the same processes', async () => {
    const env = await stackUpEnv();
    const before = await stackStatus({ env });
    const again = await ensureStack({ log: quiet, env });
    const after = await stackStatus({ env });

    expect(again.started).toEqual([]);
    expect(again.temporalAddress).toBe(shared.temporalAddress);
    expect(again.mongoUri).toBe(shared.mongoUri);
    expect(pidsOf(after)).toEqual(pidsOf(before));
    for (const name of ['temporal', 'mongo'] as const) {
      const states = after.components.filter((component) => component.name === name).map((component) => component.state);
      expect(states.some((state) => state === 'running' || state === 'external')).toBe(true);
      expect(states).not.toContain('not answering');
      expect(states).not.toContain('unreachable');
    }
  });

  it('runs the dev server with eager activity dispatch pinned on, whatever its default', async () => {
    const status = await stackStatus({ env: await stackUpEnv() });
    const temporal = status.components.find((component) => component.name === 'temporal' && component.state === 'running');
    if (!temporal?.pid) return; // An external server (TEMPORAL_ADDRESS) is configured by its operator, not by us.
    const argv = fs.readFileSync(`/proc/${temporal.pid}/cmdline`, 'utf8').split('\0');
    const values = argv.flatMap((arg, i) => (argv[i - 1] === '--dynamic-config-value' ? [arg] : []));
    expect(values).toContain('system.enableActivityEagerExecution=true');
  });

  it('gives each FerretDB collection an index its lookups by _id use, so finding one archive does not read them all', async () => {
    const status = await stackStatus({ env: await stackUpEnv() });
    const mongo = status.components.find((component) => component.name === 'mongo' && component.kind === 'ferretdb' && component.state === 'running');
    if (!mongo?.dataPath || !mongo.address) return; // mongod or an external server: its own indexes answer.
    const dbName = `id_lookup_${Date.now().toString(36)}`;
    const client = await MongoClient.connect(mongo.address);
    try {
      await client.db(dbName).collection<{ _id: string }>('probe').insertOne({ _id: 'a' });
      const file = path.join(mongo.dataPath, `${dbName}.sqlite`);
      // FerretDB's own statement for a find by _id, its UPDATE and DELETE: the plan must search the added index, not scan.
      const plan = (): string =>
        execFileSync('python3', ['-c', SQLITE_PLAN, file], { encoding: 'utf8' }).trim();
      let seen = plan();
      for (const started = Date.now(); !seen.includes('__id_lookup') && Date.now() - started < 10_000; ) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        seen = plan();
      }
      expect(seen).toMatch(/^SEARCH probe_[0-9a-f]+ USING INDEX probe_[0-9a-f]+__id_lookup \(<expr>=\?\)$/);
      // And FerretDB answers as before through it.
      await client.db(dbName).collection<{ _id: string; n?: number }>('probe').updateOne({ _id: 'a' }, { $set: { n: 1 } });
      expect(await client.db(dbName).collection('probe').findOne({ _id: 'a' as never })).toEqual({ _id: 'a', n: 1 });
    } finally {
      await client.db(dbName).dropDatabase().catch(() => undefined);
      await client.close();
    }
  });

  it('answers `stack:status` with exit code 0 and each component running', async () => {
    const result = await runStackCli(['status'], await stackUpEnv());

    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^temporal\b.*: (running|external)/m);
    expect(result.stdout).toMatch(/^mongo\b.*: (running|external)/m);
  });
});

describe('a stack in its own data dir', () => {
  it('reuses its own server, stops it by pid, and keeps the data for the next start', async () => {
    const dataDir = tempDataDir();
    const port = await freePort();
    const env = envWith({
      DURABLE_AGENT_DATA_DIR: dataDir,
      MONGO_PORT: String(port),
      MONGODB_URI: undefined,
      TEMPORAL_ADDRESS: shared.temporalAddress,
    });
    try {
      const first = await ensureStack({ log: quiet, env });
      expect(first.started).toEqual([expect.stringMatching(/^(ferretdb|mongod)$/)]);
      expect(first.mongoUri).toBe(`mongodb://127.0.0.1:${port}`);
      expect(first.temporalAddress).toBe(shared.temporalAddress);
      await withMongo(first.mongoUri, (client) => notes(client).insertOne({ _id: 'kept', text: 'survives a restart' }));

      const second = await ensureStack({ log: quiet, env });
      expect(second.started).toEqual([]);
      const mongo = (await stackStatus({ env })).components.find((component) => component.name === 'mongo' && component.state === 'running');
      expect(mongo?.pid).toEqual(expect.any(Number));

      expect(await stopStack({ log: quiet, env })).toEqual(first.started);
      expect(isRunning(mongo?.pid ?? 0)).toBe(false);
      expect((await stackStatus({ env })).components.find((component) => component.name === 'mongo')?.state).toBe('stopped');

      const third = await ensureStack({ log: quiet, env });
      expect(third.started).toEqual(first.started);
      const kept = await withMongo(third.mongoUri, (client) => notes(client).findOne({ _id: 'kept' }));
      expect(kept?.text).toBe('survives a restart');
    } finally {
      await stopStack({ log: quiet, env });
    }
    // Seconds normally; minutes only if this is the first FerretDB build on the machine
    // (the shared stack may be external and never have needed one).
  }, 15 * 60_000);

  it('never signals a recorded pid that now runs another program', async () => {
    const dataDir = tempDataDir();
    const bystander = spawn('sleep', ['60'], { stdio: 'ignore' });
    const bystanderPid = bystander.pid ?? 0;
    try {
      fs.writeFileSync(
        path.join(dataDir, 'stack.json'),
        JSON.stringify({
          version: 1,
          mongo: {
            kind: 'ferretdb',
            pid: bystanderPid,
            argv: [path.join(ROOT, '.tools/bin/ferretdb-local'), '--listen-addr', '127.0.0.1:1', '--sqlite-dir', dataDir],
            port: 1,
            address: '127.0.0.1:1',
            uri: 'mongodb://127.0.0.1:1',
            logFile: path.join(dataDir, 'logs', 'ferretdb.log'),
            startedAt: new Date().toISOString(),
            dataDir,
          },
        }),
      );
      const lines: string[] = [];

      const stopped = await stopStack({ log: (line) => lines.push(line), env: envWith({ DURABLE_AGENT_DATA_DIR: dataDir }) });

      expect(stopped).toEqual([]);
      expect(isRunning(bystanderPid)).toBe(true);
      expect(lines.join('\n')).toContain(`pid ${bystanderPid}): that pid now runs another program`);
      expect(JSON.parse(fs.readFileSync(path.join(dataDir, 'stack.json'), 'utf8'))).toEqual({ version: 1 });
    } finally {
      bystander.kill('SIGKILL');
    }
  });

  it('reports a Mongo port held by a foreign process and exits non-zero (stack:up)', async () => {
    const dataDir = tempDataDir();
    const held = await holdPort();
    try {
      const result = await runStackCli(
        ['up'],
        envWith({
          DURABLE_AGENT_DATA_DIR: dataDir,
          MONGO_PORT: String(held.port),
          MONGODB_URI: undefined,
          TEMPORAL_ADDRESS: shared.temporalAddress,
        }),
      );

      expect(result.code).not.toBe(0);
      expect(result.stderr).toContain(
        `port ${held.port} is in use by another process (not started by durable-agent); stop it or set MONGO_PORT / MONGODB_URI`,
      );
      expect(result.stderr).toContain(`held by pid ${process.pid}`);
      const pidFiles = fs.existsSync(path.join(dataDir, 'pids')) ? fs.readdirSync(path.join(dataDir, 'pids')) : [];
      expect(pidFiles).toEqual([]);
    } finally {
      await held.close();
    }
  });

  it('reports a Temporal port held by a foreign process before installing or starting anything', async () => {
    const held = await holdPort();
    const env = envWith({
      DURABLE_AGENT_DATA_DIR: tempDataDir(),
      TEMPORAL_ADDRESS: undefined,
      TEMPORAL_PORT: String(held.port),
      TEMPORAL_UI_PORT: String(await freePort()),
      MONGODB_URI: shared.mongoUri,
    });
    try {
      const attempt = ensureStack({ log: quiet, env });

      await expect(attempt).rejects.toBeInstanceOf(PortInUseError);
      await expect(attempt).rejects.toThrow(
        `port ${held.port} is in use by another process (not started by durable-agent); stop it or set TEMPORAL_PORT / TEMPORAL_ADDRESS`,
      );
    } finally {
      await held.close();
    }
  });

  const realCli = installedTemporalCli();
  (realCli ? it : it.skip)('retries without --search-attribute when the CLI refuses it, then registers the attributes itself', async () => {
    const dataDir = tempDataDir();
    // Failure injection: a CLI that refuses the flags, as some versions do
    // for attributes already in an existing database, and otherwise runs the real one.
    const fakeCli = path.join(dataDir, 'bin', 'temporal');
    fs.mkdirSync(path.dirname(fakeCli));
    fs.writeFileSync(
      fakeCli,
      [
        '#!/usr/bin/env bash',
        'if [[ " $* " == *" --search-attribute "* ]]; then',
        '  echo "Error: unable to register search attribute SessionUser: already exists" >&2',
        '  exit 1',
        'fi',
        'exec "$REAL_CLI_FOR_STACK_TEST" "$@"',
        '',
      ].join('\n'),
      { mode: 0o755 },
    );
    const env = envWith({
      DURABLE_AGENT_DATA_DIR: dataDir,
      TEMPORAL_ADDRESS: undefined,
      TEMPORAL_CLI_PATH: fakeCli,
      REAL_CLI_FOR_STACK_TEST: realCli ?? '',
      TEMPORAL_PORT: String(await freePort()),
      TEMPORAL_UI_PORT: String(await freePort()),
      MONGODB_URI: shared.mongoUri,
    });
    const lines: string[] = [];
    try {
      const info = await ensureStack({ log: (line) => lines.push(line), env });

      expect(info.started).toEqual(['temporal']);
      expect(lines.join('\n')).toContain('refused the search attribute flags');
      expect(lines.join('\n')).toContain('registered search attributes SessionUser, SessionTenant, SessionStatus');
      // The recorded command is the fake's; the running one is the real CLI it exec'd.
      expect(await stopStack({ log: quiet, env })).toEqual(['temporal']);
    } finally {
      await stopStack({ log: quiet, env });
    }
  }, 120_000);

  it('fails clearly when TEMPORAL_ADDRESS is set but nothing answers there', async () => {
    const port = await freePort();
    const env = envWith({ DURABLE_AGENT_DATA_DIR: tempDataDir(), TEMPORAL_ADDRESS: `127.0.0.1:${port}`, MONGODB_URI: shared.mongoUri });

    await expect(ensureStack({ log: quiet, env })).rejects.toThrow(`TEMPORAL_ADDRESS=127.0.0.1:${port} is set but nothing answers there`);
  });

  it('reports every component stopped in an empty data dir, with exit code 0 (stack:status)', async () => {
    const result = await runStackCli(
      ['status'],
      envWith({ DURABLE_AGENT_DATA_DIR: tempDataDir(), TEMPORAL_ADDRESS: undefined, MONGODB_URI: undefined }),
    );

    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^temporal\b.*: stopped/m);
    expect(result.stdout).toMatch(/^mongo\b.*: stopped/m);
  });
});
