import { errorMessage, StackError } from './errors';
import { formatComponent } from './format';
import { acquireStackLock } from './lock';
import { ensureCodec } from './codec';
import { ensureMongo } from './mongo';
import { ensureDataDirs, resolveStackPaths } from './paths';
import { readState } from './state-file';
import { ensureTemporal, temporalNamespace } from './temporal';
import type { ComponentView, Log, StackContext, StackInfo } from './types';

export interface EnsureStackOptions {
  /** Receives progress and the final "what runs where" summary; defaults to stdout. */
  log?: Log;
  /** Settings (TEMPORAL_ADDRESS, MONGO_PORT, DURABLE_AGENT_DATA_DIR...); defaults to process.env. */
  env?: NodeJS.ProcessEnv;
}

/**
 * Makes sure Temporal and a MongoDB-compatible server are running and
 * returns where they are. Idempotent: what is already running (and recorded
 * as ours, or named by the environment) is reused, and `started` lists only
 * what this call started. Servers outlive the calling process.
 */
export async function ensureStack(options: EnsureStackOptions = {}): Promise<StackInfo> {
  const log = options.log ?? defaultLog;
  const env = options.env ?? process.env;
  const paths = resolveStackPaths(env);
  ensureDataDirs(paths);
  const ctx: StackContext = { paths, env, log };

  const release = await acquireStackLock(paths, log);
  let temporal: ComponentView;
  let mongo: ComponentView;
  let codec: ComponentView | null = null;
  try {
    // Fails once, up front, on an unreadable state file (rather than once per component).
    readState(paths);
    // Independent, and each may install or build something: run them together.
    const [temporalResult, mongoResult] = await Promise.allSettled([ensureTemporal(ctx), ensureMongo(ctx)]);
    if (temporalResult.status === 'rejected' || mongoResult.status === 'rejected') {
      throw combineFailures([temporalResult, mongoResult]);
    }
    temporal = temporalResult.value;
    mongo = mongoResult.value;
    codec = await ensureCodec(ctx, temporal.origin === 'external' ? null : (readState(paths).temporal ?? null));
  } finally {
    release();
  }

  for (const view of [temporal, mongo, ...(codec ? [codec] : [])]) for (const line of formatComponent(view, paths)) log(line);
  const externalMongo = env.MONGODB_URI?.trim();
  return {
    temporalAddress: requireAddress(temporal),
    temporalNamespace: temporalNamespace(env),
    uiUrl: temporal.uiUrl ?? null,
    mongoUri: externalMongo && mongo.origin === 'external' ? externalMongo : requireAddress(mongo),
    codecUrl: codec?.address ?? null,
    started: [temporal, mongo, ...(codec ? [codec] : [])].filter((view) => view.origin === 'started').map(startedName),
  };
}

function startedName(view: ComponentView): string {
  return view.name === 'temporal' || view.name === 'codec' ? view.name : view.kind;
}

function requireAddress(view: ComponentView): string {
  if (!view.address) throw new StackError(`${view.name} is running but has no address`);
  return view.address;
}

/** One failure keeps its own type (tests and callers match on it); two are joined. */
function combineFailures(results: PromiseSettledResult<ComponentView>[]): unknown {
  const reasons = results.filter((result): result is PromiseRejectedResult => result.status === 'rejected').map((result) => result.reason);
  if (reasons.length === 1) return reasons[0];
  return new StackError([...new Set(reasons.map(errorMessage))].join('\n\n'));
}

function defaultLog(line: string): void {
  process.stdout.write(`${line}\n`);
}
