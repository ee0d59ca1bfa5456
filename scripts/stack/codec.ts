import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { keyListProblems } from '../../codec/encryption-keys';
import { StackConfigError, StartupFailedError } from './errors';
import { markLogStart, withLogTail } from './log-file';
import { logFileFor, type StackPaths } from './paths';
import { assertPortFree, LOOPBACK, portFromEnv } from './ports';
import { isOurProcess, isRunning, spawnDetached, terminate } from './processes';
import { clearComponent, readState, saveComponent, type CodecRecord, type TemporalRecord } from './state-file';
import type { ComponentView, Log, StackContext } from './types';
import { sleep } from './wait';

export const DEFAULT_CODEC_PORT = 8234;
const START_TIMEOUT_MS = 30_000;

/** What the dev server's UI is pointed at when payload encryption is on. */
export interface CodecPlan {
  port: number;
  token: string;
  /** `http://127.0.0.1:<port>/<token>`: the UI appends /decode (it cannot send a header). */
  endpoint: string;
}

/**
 * The codec server the local stack runs beside the dev server when
 * PAYLOAD_ENCRYPTION_KEYS is set, so the Web UI shows decrypted payloads; null
 * when encryption is off. The token is CODEC_SERVER_TOKEN, or one made once
 * and kept in the data dir (readable by its owner only), so restarts keep the
 * endpoint the UI was started with.
 */
export function codecPlan(ctx: StackContext): CodecPlan | null {
  const keys = ctx.env.PAYLOAD_ENCRYPTION_KEYS?.trim();
  if (!keys) return null;
  const problems = keyListProblems(keys);
  if (problems.length > 0) throw new StackConfigError(`PAYLOAD_ENCRYPTION_KEYS: ${problems.join('; ')}`);
  const port = portFromEnv(ctx.env, 'CODEC_SERVER_PORT', DEFAULT_CODEC_PORT);
  const token = ctx.env.CODEC_SERVER_TOKEN?.trim() || storedToken(ctx.paths);
  if (token.length < 16) throw new StackConfigError('CODEC_SERVER_TOKEN must be at least 16 characters (openssl rand -hex 24), or unset to let the stack make one');
  return { port, token, endpoint: `http://${LOOPBACK}:${port}/${encodeURIComponent(token)}` };
}

function storedToken(paths: StackPaths): string {
  const file = path.join(paths.dataDir, 'codec-token');
  try {
    const existing = fs.readFileSync(file, 'utf8').trim();
    if (existing.length >= 16) return existing;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const token = randomBytes(24).toString('hex');
  fs.writeFileSync(file, `${token}\n`, { mode: 0o600 });
  return token;
}

/** The codec endpoint a recorded dev server's UI was started with, if any. */
export function uiCodecEndpoint(record: TemporalRecord): string | null {
  const at = record.argv.indexOf('--ui-codec-endpoint');
  return at >= 0 ? (record.argv[at + 1] ?? null) : null;
}

/**
 * Runs the codec server the dev server's UI was pointed at: reuses ours when
 * it still answers with the same endpoint, else starts one. Does nothing for
 * an external Temporal (its UI is configured where it runs) or when
 * encryption is off.
 */
export async function ensureCodec(ctx: StackContext, temporal: TemporalRecord | null): Promise<ComponentView | null> {
  const log: Log = (line) => ctx.log(`codec: ${line}`);
  const plan = codecPlan(ctx);
  if (!plan) return null;
  if (!temporal) {
    log('PAYLOAD_ENCRYPTION_KEYS is set but Temporal is external: run `npm run codec-server` and give its URL to that server\'s UI');
    return null;
  }
  const uiEndpoint = uiCodecEndpoint(temporal);
  if (uiEndpoint !== plan.endpoint) {
    log(
      uiEndpoint === null
        ? 'PAYLOAD_ENCRYPTION_KEYS is set, but the running dev server\'s UI was started without a codec endpoint and shows ciphertext; run stack:down and stack:up to restart it with one'
        : 'the running dev server\'s UI was started with another codec endpoint (CODEC_SERVER_PORT or the token changed); run stack:down and stack:up to restart it',
    );
    return null;
  }
  const { paths } = ctx;
  const recorded = readState(paths).codec;
  if (recorded) {
    if (isOurProcess(recorded.pid, recorded.argv) && recorded.endpoint === plan.endpoint && (await answers(plan))) return codecView(recorded, temporal, 'reused');
    if (isRunning(recorded.pid) && isOurProcess(recorded.pid, recorded.argv)) await terminate(recorded.pid, 5_000);
    clearComponent(paths, 'codec');
  }
  return start(ctx, plan, temporal, log);
}

async function start(ctx: StackContext, plan: CodecPlan, temporal: TemporalRecord, log: Log): Promise<ComponentView> {
  const { paths } = ctx;
  await assertPortFree(plan.port, 'CODEC_SERVER_PORT');
  const argv = [process.execPath, '--import', 'tsx', path.join(paths.root, 'scripts', 'codec-server.ts')];
  const logFile = logFileFor(paths, 'codec');
  const offset = markLogStart(logFile, argv);
  log(`starting the codec server for the web UI on ${LOOPBACK}:${plan.port} (log: ${logFile})`);
  const env: NodeJS.ProcessEnv = {
    ...ctx.env,
    CODEC_SERVER_TOKEN: plan.token,
    CODEC_SERVER_PORT: String(plan.port),
    CODEC_SERVER_HOST: LOOPBACK,
    // The page's origin: the UI is opened as 127.0.0.1 or localhost.
    CODEC_SERVER_ORIGINS: `http://${LOOPBACK}:${temporal.uiPort},http://localhost:${temporal.uiPort}`,
  };
  const pid = await spawnDetached({ argv, logFile, cwd: paths.root, env });
  const record: CodecRecord = {
    kind: 'codec',
    pid,
    argv,
    port: plan.port,
    address: `${LOOPBACK}:${plan.port}`,
    endpoint: plan.endpoint,
    logFile,
    startedAt: new Date().toISOString(),
  };
  saveComponent(paths, 'codec', record);
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (!(await answers(plan))) {
    if (!isRunning(pid) || Date.now() > deadline) {
      const exited = !isRunning(pid);
      await terminate(pid, 5_000);
      clearComponent(paths, 'codec');
      throw new StartupFailedError(withLogTail(`the codec server ${exited ? 'exited while starting' : `did not answer within ${START_TIMEOUT_MS / 1000} s`}`, logFile, offset));
    }
    await sleep(250);
  }
  return codecView(record, temporal, 'started');
}

/** Does our codec server decode an empty batch with this token? */
async function answers(plan: CodecPlan): Promise<boolean> {
  try {
    const res = await fetch(`${plan.endpoint}/decode`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ payloads: [] }),
      signal: AbortSignal.timeout(2_000),
    });
    return res.ok;
  } catch {
    return false;
  }
}

export function codecView(record: CodecRecord, temporal: TemporalRecord | null, origin?: ComponentView['origin']): ComponentView {
  return {
    name: 'codec',
    kind: 'codec server',
    state: 'running',
    ...(origin ? { origin } : {}),
    pid: record.pid,
    // The token is a secret of the local stack: status shows where, not how to get in.
    address: `http://${record.address}`,
    logFile: record.logFile,
    note: `decrypts payloads for the web UI${temporal ? ` ${temporal.uiUrl}` : ''} (token: CODEC_SERVER_TOKEN, or codec-token in the data dir)`,
  };
}
