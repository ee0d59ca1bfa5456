import fs from 'node:fs';
import { z } from 'zod';
import { StackError } from './errors';
import { pidFileFor, type StackPaths } from './paths';

/** What we need to find, verify and stop a server we started. */
const ManagedProcess = z.object({
  pid: z.number().int().positive(),
  /** Exact argv we spawned; compared with /proc/<pid>/cmdline before any signal. */
  argv: z.array(z.string()).min(1),
  port: z.number().int().min(1).max(65535),
  address: z.string(),
  logFile: z.string(),
  startedAt: z.string(),
});

export const TemporalRecord = ManagedProcess.extend({
  kind: z.literal('temporal'),
  namespace: z.string(),
  uiPort: z.number().int().min(1).max(65535),
  uiUrl: z.string(),
  dbFile: z.string(),
});
export type TemporalRecord = z.infer<typeof TemporalRecord>;

export const MongoRecord = ManagedProcess.extend({
  kind: z.enum(['ferretdb', 'mongod']),
  uri: z.string(),
  dataDir: z.string(),
});
export type MongoRecord = z.infer<typeof MongoRecord>;

/** The codec server the dev server's UI decrypts payloads with (only while encryption is on). */
export const CodecRecord = ManagedProcess.extend({
  kind: z.literal('codec'),
  /** The endpoint the UI was given, token included; a local secret, like the keys in the environment. */
  endpoint: z.string(),
});
export type CodecRecord = z.infer<typeof CodecRecord>;

export const StackState = z.object({
  version: z.literal(1),
  temporal: TemporalRecord.optional(),
  mongo: MongoRecord.optional(),
  codec: CodecRecord.optional(),
});
export type StackState = z.infer<typeof StackState>;

export type ComponentName = 'temporal' | 'mongo' | 'codec';

/**
 * Reads .data/stack.json: the record of what durable-agent started. A missing
 * file means we started nothing; an unreadable one is an error rather than
 * "nothing", because guessing could start a second server or orphan one.
 */
export function readState(paths: StackPaths): StackState {
  let text: string;
  try {
    text = fs.readFileSync(paths.stateFile, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { version: 1 };
    throw error;
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw corrupt(paths, (error as Error).message);
  }
  const parsed = StackState.safeParse(json);
  if (!parsed.success) throw corrupt(paths, parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; '));
  return parsed.data;
}

function corrupt(paths: StackPaths, detail: string): StackError {
  return new StackError(
    `${paths.stateFile} is not a valid stack state file (${detail}); stop any servers it listed by hand (see ${paths.pidsDir}) and delete it`,
  );
}

/**
 * Synchronous read-modify-write: temporal and mongo start concurrently in one
 * process, and doing each update without an await in between keeps them from
 * overwriting each other. Other processes are kept out by the stack lock.
 */
export function saveComponent(paths: StackPaths, name: 'temporal', record: TemporalRecord): void;
export function saveComponent(paths: StackPaths, name: 'mongo', record: MongoRecord): void;
export function saveComponent(paths: StackPaths, name: 'codec', record: CodecRecord): void;
export function saveComponent(paths: StackPaths, name: ComponentName, record: TemporalRecord | MongoRecord | CodecRecord): void {
  const state = readState(paths);
  writeState(paths, { ...state, [name]: record });
  fs.writeFileSync(pidFileFor(paths, name), `${record.pid}\n`);
}

export function clearComponent(paths: StackPaths, name: ComponentName): void {
  const state = readState(paths);
  const next: StackState = { ...state };
  delete next[name];
  writeState(paths, next);
  fs.rmSync(pidFileFor(paths, name), { force: true });
}

function writeState(paths: StackPaths, state: StackState): void {
  const temp = `${paths.stateFile}.${process.pid}.tmp`;
  fs.writeFileSync(temp, `${JSON.stringify(state, null, 2)}\n`);
  fs.renameSync(temp, paths.stateFile);
}

/**
 * The pid file mirrors the state file for people and shell tools; when both
 * exist and disagree the state file wins, but we say so.
 */
export function pidFileMismatch(paths: StackPaths, name: ComponentName, pid: number): string | null {
  try {
    const recorded = Number(fs.readFileSync(pidFileFor(paths, name), 'utf8').trim());
    return recorded === pid ? null : `${pidFileFor(paths, name)} says ${recorded} but ${paths.stateFile} says ${pid}; using ${pid}`;
  } catch {
    return null;
  }
}
