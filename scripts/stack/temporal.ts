import fs from 'node:fs';
import path from 'node:path';
import { errorMessage, ExternalServerUnreachableError, StackConfigError, StartupFailedError } from './errors';
import { markLogStart, tailLog, withLogTail } from './log-file';
import { logFileFor, type StackPaths } from './paths';
import { assertPortFree, canConnect, LOOPBACK, parseHostPort, portFromEnv } from './ports';
import { isOurProcess, isRunning, spawnDetached, terminate } from './processes';
import { searchAttributeFlags } from './search-attributes';
import { codecPlan } from './codec';
import { clearComponent, pidFileMismatch, readState, saveComponent, type TemporalRecord } from './state-file';
import { resolveTemporalBinary, startDevHelp } from './temporal-binary';
import { ensureSearchAttributes, waitForTemporal } from './temporal-health';
import type { ComponentView, Log, StackContext } from './types';
import { sleep } from './wait';

export const DEFAULT_TEMPORAL_PORT = 7233;
export const DEFAULT_TEMPORAL_UI_PORT = 8233;
/** A first start creates the SQLite schema; a cold 2-core machine needs some seconds. */
const START_TIMEOUT_MS = 120_000;
/** A recorded server that is alive should answer promptly; otherwise it is hung. */
const REUSE_TIMEOUT_MS = 30_000;
const REFUSED_SEARCH_ATTRIBUTES = 'refused-search-attributes';

interface TemporalSettings {
  port: number;
  uiPort: number;
  namespace: string;
}

export function temporalNamespace(env: NodeJS.ProcessEnv): string {
  return env.TEMPORAL_NAMESPACE?.trim() || 'default';
}

export function temporalSettings(env: NodeJS.ProcessEnv): TemporalSettings {
  return {
    port: portFromEnv(env, 'TEMPORAL_PORT', DEFAULT_TEMPORAL_PORT),
    uiPort: portFromEnv(env, 'TEMPORAL_UI_PORT', DEFAULT_TEMPORAL_UI_PORT),
    namespace: temporalNamespace(env),
  };
}

/**
 * Makes a Temporal frontend available: the one named by TEMPORAL_ADDRESS, the
 * dev server our state file says we started, or a new dev server.
 */
export async function ensureTemporal(ctx: StackContext): Promise<ComponentView> {
  const log: Log = (line) => ctx.log(`temporal: ${line}`);
  const external = ctx.env.TEMPORAL_ADDRESS?.trim();
  if (external) return useExternalTemporal(external, temporalNamespace(ctx.env), ctx.env, log);
  const settings = temporalSettings(ctx.env);
  return (await reuseRecordedTemporal(ctx.paths, settings, log)) ?? (await startTemporal(ctx, settings, log));
}

async function useExternalTemporal(address: string, namespace: string, env: NodeJS.ProcessEnv, log: Log): Promise<ComponentView> {
  const { host, port } = parseHostPort(address, 'TEMPORAL_ADDRESS');
  if (!(await canConnect(host, port, 3_000))) {
    throw new ExternalServerUnreachableError(
      `TEMPORAL_ADDRESS=${address} is set but nothing answers there (TCP connect to ${host}:${port} failed); ` +
        'start that server, or unset TEMPORAL_ADDRESS to let durable-agent start a local one',
    );
  }
  try {
    await waitForTemporal({ address, namespace, timeoutMs: 20_000 });
  } catch (error) {
    throw new ExternalServerUnreachableError(
      `TEMPORAL_ADDRESS=${address} accepts connections but is not a usable Temporal frontend for namespace ${namespace} ` +
        `(${errorMessage(error)}); the local stack speaks plain gRPC without TLS or API keys`,
    );
  }
  await addMissingSearchAttributes(address, namespace, log, true);
  return {
    name: 'temporal',
    kind: 'external',
    state: 'external',
    origin: 'external',
    pid: null,
    address,
    uiUrl: env.TEMPORAL_UI_URL?.trim() || null,
    logFile: null,
    note: `from TEMPORAL_ADDRESS, namespace ${namespace}`,
  };
}

async function reuseRecordedTemporal(paths: StackPaths, settings: TemporalSettings, log: Log): Promise<ComponentView | null> {
  const record = readState(paths).temporal;
  if (!record) return null;
  const mismatch = pidFileMismatch(paths, 'temporal', record.pid);
  if (mismatch) log(mismatch);
  if (!isOurProcess(record.pid, record.argv)) {
    log(
      isRunning(record.pid)
        ? `pid ${record.pid} from ${paths.stateFile} is now another program; forgetting it`
        : `the server started earlier (pid ${record.pid}) is gone; starting a new one`,
    );
    clearComponent(paths, 'temporal');
    return null;
  }
  if (record.port !== settings.port || record.uiPort !== settings.uiPort) {
    throw new StackConfigError(
      `the temporal server durable-agent started (pid ${record.pid}) listens on ${record.port} with the UI on ${record.uiPort}, ` +
        `but TEMPORAL_PORT / TEMPORAL_UI_PORT ask for ${settings.port} / ${settings.uiPort}; run stack:down first to move it`,
    );
  }
  await waitForTemporal({
    address: record.address,
    namespace: settings.namespace,
    timeoutMs: REUSE_TIMEOUT_MS,
    stillRunning: () => isRunning(record.pid),
    explain: (message) => withLogTail(`${message}; run stack:down and stack:up to restart it`, record.logFile, 0),
  });
  // A server started by an older version of the project may lack an attribute added since.
  await addMissingSearchAttributes(record.address, settings.namespace, log, false);
  return recordView(record, 'reused');
}

/**
 * Server settings the stack pins rather than inherits.
 *
 * The history service reads its queues of new tasks from the store at most
 * `*MaxPollRPS` times a second (20 by default, for a cluster under load).
 * On a one-developer stack that cap is the main wait between an activity
 * completing and the next workflow task reaching the worker: up to 50 ms,
 * measured at 17-22 ms on average. Lifting it costs nothing when idle.
 *
 * Eager activity dispatch hands a model call scheduled by a workflow task
 * straight back to the worker that completed it, skipping one trip through
 * matching per step. Recent dev servers default it on, older ones (and
 * clusters) off; a `temporal` found on PATH may be older, so it is set here.
 */
export const LOW_LATENCY_DYNAMIC_CONFIG = [
  'system.enableActivityEagerExecution=true',
  'history.transferProcessorMaxPollRPS=10000',
  'history.timerProcessorMaxPollRPS=10000',
  'history.visibilityProcessorMaxPollRPS=10000',
];

async function startTemporal(ctx: StackContext, settings: TemporalSettings, log: Log): Promise<ComponentView> {
  const { paths, env } = ctx;
  // Checked before looking for a binary, so a clash is reported in a second
  // rather than after an install.
  await assertPortFree(settings.port, 'TEMPORAL_PORT / TEMPORAL_ADDRESS');
  await assertPortFree(settings.uiPort, 'TEMPORAL_UI_PORT');
  const binary = await resolveTemporalBinary(paths, env, log);
  log(`using ${binary.path} (${binary.version}, from ${binary.source})`);
  const help = await startDevHelp(binary.path, paths.root, env);
  // With payload encryption on, the UI decrypts through the codec server the stack runs beside it.
  const codec = codecPlan(ctx);
  if (codec) log(`PAYLOAD_ENCRYPTION_KEYS is set: the web UI will decrypt payloads through ${LOOPBACK}:${codec.port}`);
  fs.mkdirSync(path.dirname(paths.temporalDbFile), { recursive: true });

  const argvFor = (withSearchAttributes: boolean): string[] => [
    binary.path,
    'server',
    'start-dev',
    '--ip',
    LOOPBACK,
    '--port',
    String(settings.port),
    '--ui-port',
    String(settings.uiPort),
    '--db-filename',
    paths.temporalDbFile,
    ...(help.includes('--sqlite-pragma') ? ['--sqlite-pragma', 'journal_mode=wal', '--sqlite-pragma', 'synchronous=normal'] : []),
    '--log-level',
    'warn',
    // The UI would otherwise fetch a news feed from the internet on every page load.
    ...(help.includes('--ui-disable-news-fetch') ? ['--ui-disable-news-fetch'] : []),
    ...(codec ? ['--ui-codec-endpoint', codec.endpoint] : []),
    ...(settings.namespace === 'default' ? [] : ['--namespace', settings.namespace]),
    ...(help.includes('--dynamic-config-value') ? LOW_LATENCY_DYNAMIC_CONFIG.flatMap((kv) => ['--dynamic-config-value', kv]) : []),
    ...(withSearchAttributes ? searchAttributeFlags() : []),
  ];
  if (!help.includes('--dynamic-config-value')) log('this CLI has no --dynamic-config-value flag; eager activity dispatch and the low-latency queues follow its defaults');
  if (!help.includes('--sqlite-pragma')) log('this CLI has no --sqlite-pragma flag; running without the WAL pragmas');

  let record = await launch(ctx, argvFor(true), settings, log);
  if (record === REFUSED_SEARCH_ATTRIBUTES) {
    // Some CLI versions refuse --search-attribute for names already in an
    // existing database; start without the flags and add what is missing
    // through the operator API below.
    log('the server refused the search attribute flags for the existing database; retrying without them');
    record = await launch(ctx, argvFor(false), settings, log);
  }
  if (record === REFUSED_SEARCH_ATTRIBUTES) throw new StartupFailedError('temporal dev server exited while starting');
  await addMissingSearchAttributes(record.address, settings.namespace, log, false);
  if (!(await waitForPort(settings.uiPort, 15_000))) log(`warning: the web UI does not answer on ${record.uiUrl} yet`);
  return recordView(record, 'started');
}

/**
 * Starts the dev server and waits until it is healthy. Returns
 * REFUSED_SEARCH_ATTRIBUTES when the server exited at once complaining about
 * its --search-attribute flags, so the caller can retry without them.
 */
async function launch(
  ctx: StackContext,
  argv: string[],
  settings: TemporalSettings,
  log: Log,
): Promise<TemporalRecord | typeof REFUSED_SEARCH_ATTRIBUTES> {
  const { paths } = ctx;
  const logFile = logFileFor(paths, 'temporal');
  const offset = markLogStart(logFile, argv);
  log(`starting the dev server on ${LOOPBACK}:${settings.port} (log: ${logFile})`);
  const pid = await spawnDetached({ argv, logFile, cwd: paths.root, env: serverEnv(ctx.env) });
  const record: TemporalRecord = {
    kind: 'temporal',
    pid,
    argv,
    port: settings.port,
    address: `${LOOPBACK}:${settings.port}`,
    logFile,
    startedAt: new Date().toISOString(),
    namespace: settings.namespace,
    uiPort: settings.uiPort,
    uiUrl: `http://${LOOPBACK}:${settings.uiPort}`,
    dbFile: paths.temporalDbFile,
  };
  // Recorded before the health wait so that even a hung start can be stopped by stack:down.
  saveComponent(paths, 'temporal', record);
  try {
    await waitForTemporal({
      address: record.address,
      namespace: settings.namespace,
      timeoutMs: START_TIMEOUT_MS,
      stillRunning: () => isRunning(pid),
      explain: (message) => withLogTail(message, logFile, offset),
    });
  } catch (error) {
    const exited = !isRunning(pid);
    await terminate(pid, 5_000);
    clearComponent(paths, 'temporal');
    const refused = exited && argv.includes('--search-attribute') && /search.?attribute/i.test(tailLog(logFile, offset, 40));
    if (refused) return REFUSED_SEARCH_ATTRIBUTES;
    throw error;
  }
  return record;
}

async function addMissingSearchAttributes(address: string, namespace: string, log: Log, external: boolean): Promise<void> {
  try {
    const added = await ensureSearchAttributes(address, namespace);
    if (added.length > 0) log(`registered search attributes ${added.join(', ')} in namespace ${namespace}`);
  } catch (error) {
    const message = `could not check the session search attributes on ${address}: ${errorMessage(error)}`;
    // A cluster we do not own may forbid operator calls; our own server must not.
    if (external) log(`warning: ${message}`);
    else throw new ExternalServerUnreachableError(message);
  }
}

/**
 * The CLI reads TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TLS and API key
 * variables as client settings; the server we start is configured by its
 * flags alone, so those are not passed on.
 */
function serverEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([key]) => !key.startsWith('TEMPORAL_')));
}

async function waitForPort(port: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await canConnect(LOOPBACK, port, 500)) return true;
    await sleep(250);
  }
  return false;
}

export function recordView(record: TemporalRecord, origin?: ComponentView['origin']): ComponentView {
  return {
    name: 'temporal',
    kind: 'temporal dev server',
    state: 'running',
    ...(origin ? { origin } : {}),
    pid: record.pid,
    address: record.address,
    uiUrl: record.uiUrl,
    logFile: record.logFile,
    dataPath: record.dbFile,
    note: `namespace ${record.namespace}`,
  };
}
