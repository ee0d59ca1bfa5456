import fs from 'node:fs';
import { errorMessage } from './errors';
import { redactUri } from './mongo-health';
import { mongoPort, mongoView } from './mongo';
import { logFileFor, resolveStackPaths, type StackPaths } from './paths';
import { canConnect, LOOPBACK, parseHostPort } from './ports';
import { isOurProcess } from './processes';
import { codecView } from './codec';
import { readState, type CodecRecord, type MongoRecord, type StackState, type TemporalRecord } from './state-file';
import { recordView, temporalSettings } from './temporal';
import type { ComponentView, StackStatus } from './types';

export interface StackStatusOptions {
  /** Settings (DURABLE_AGENT_DATA_DIR, TEMPORAL_PORT...); defaults to process.env. */
  env?: NodeJS.ProcessEnv;
}

/**
 * Reports each component without changing anything: what we started and
 * whether it still runs and answers, plus any server named by the environment.
 */
export async function stackStatus(options: StackStatusOptions = {}): Promise<StackStatus> {
  const env = options.env ?? process.env;
  const paths = resolveStackPaths(env);
  let state: StackState = { version: 1 };
  let stateProblem: string | null = null;
  try {
    state = readState(paths);
  } catch (error) {
    stateProblem = errorMessage(error);
  }
  const components = [
    await temporalStatus(paths, state.temporal, env),
    await mongoStatus(paths, state.mongo, env),
    ...(state.codec ? [await codecStatus(state.codec, state.temporal ?? null)] : []),
    ...(await externalStatus(env)),
  ];
  if (stateProblem) for (const component of components) component.note ??= stateProblem;
  return { dataDir: paths.dataDir, components };
}

async function temporalStatus(paths: StackPaths, record: TemporalRecord | undefined, env: NodeJS.ProcessEnv): Promise<ComponentView> {
  if (record) {
    const view = recordView(record);
    if (!isOurProcess(record.pid, record.argv)) return { ...view, state: 'stopped', note: `pid ${record.pid} recorded in stack.json is gone` };
    return (await canConnect(LOOPBACK, record.port)) ? view : { ...view, state: 'not answering' };
  }
  const view: ComponentView = {
    name: 'temporal',
    kind: 'temporal dev server',
    state: 'stopped',
    pid: null,
    address: null,
    logFile: existing(logFileFor(paths, 'temporal')),
  };
  try {
    const { port, uiPort } = temporalSettings(env);
    return { ...view, address: `${LOOPBACK}:${port}`, uiUrl: `http://${LOOPBACK}:${uiPort}` };
  } catch (error) {
    // status reports bad settings instead of failing: it must always answer.
    return { ...view, note: errorMessage(error) };
  }
}

async function codecStatus(record: CodecRecord, temporal: TemporalRecord | null): Promise<ComponentView> {
  const view = codecView(record, temporal);
  if (!isOurProcess(record.pid, record.argv)) return { ...view, state: 'stopped', note: `pid ${record.pid} recorded in stack.json is gone` };
  return (await canConnect(LOOPBACK, record.port)) ? view : { ...view, state: 'not answering' };
}

async function mongoStatus(paths: StackPaths, record: MongoRecord | undefined, env: NodeJS.ProcessEnv): Promise<ComponentView> {
  if (record) {
    const view = mongoView(record);
    if (!isOurProcess(record.pid, record.argv)) return { ...view, state: 'stopped', note: `pid ${record.pid} recorded in stack.json is gone` };
    return (await canConnect(LOOPBACK, record.port)) ? view : { ...view, state: 'not answering' };
  }
  const view: ComponentView = {
    name: 'mongo',
    kind: 'ferretdb or mongod',
    state: 'stopped',
    pid: null,
    address: null,
    logFile: existing(logFileFor(paths, 'ferretdb')) ?? existing(logFileFor(paths, 'mongod')),
  };
  try {
    return { ...view, address: `mongodb://${LOOPBACK}:${mongoPort(env)}` };
  } catch (error) {
    return { ...view, note: errorMessage(error) };
  }
}

/** Servers named by TEMPORAL_ADDRESS / MONGODB_URI: reachable or not, never ours. */
async function externalStatus(env: NodeJS.ProcessEnv): Promise<ComponentView[]> {
  const views: ComponentView[] = [];
  const temporal = env.TEMPORAL_ADDRESS?.trim();
  if (temporal) {
    const view: ComponentView = {
      name: 'temporal',
      kind: 'external',
      state: 'unreachable',
      pid: null,
      address: temporal,
      uiUrl: env.TEMPORAL_UI_URL?.trim() || null,
      logFile: null,
      note: 'from TEMPORAL_ADDRESS; used instead of a local server',
    };
    try {
      const { host, port } = parseHostPort(temporal, 'TEMPORAL_ADDRESS');
      views.push((await canConnect(host, port)) ? { ...view, state: 'external' } : view);
    } catch (error) {
      views.push({ ...view, note: errorMessage(error) });
    }
  }
  const mongo = env.MONGODB_URI?.trim();
  if (mongo) {
    views.push({
      name: 'mongo',
      kind: 'external',
      state: 'external',
      pid: null,
      address: redactUri(mongo),
      logFile: null,
      note: 'from MONGODB_URI; used instead of a local server (not pinged by status)',
    });
  }
  return views;
}

function existing(file: string): string | null {
  return fs.existsSync(file) ? file : null;
}
