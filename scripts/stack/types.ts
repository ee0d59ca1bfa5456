import type { StackPaths } from './paths';

/** Receives one human-readable progress line at a time. */
export type Log = (line: string) => void;

/** Where the test suite and workers find the stack. Returned by ensureStack(). */
export interface StackInfo {
  /** host:port of the Temporal frontend. */
  temporalAddress: string;
  temporalNamespace: string;
  /** Temporal Web UI, or null for a server we did not start and no TEMPORAL_UI_URL. */
  uiUrl: string | null;
  mongoUri: string;
  /** The codec server the UI decrypts with, when PAYLOAD_ENCRYPTION_KEYS was set for a local dev server; else null. */
  codecUrl: string | null;
  /** Components this call started ('temporal', 'ferretdb', 'mongod'); empty when all were running. */
  started: string[];
}

export interface StackContext {
  paths: StackPaths;
  env: NodeJS.ProcessEnv;
  log: Log;
}

export type ComponentState = 'running' | 'stopped' | 'not answering' | 'external' | 'unreachable';

/** One component as shown by `up` and `status`. */
export interface ComponentView {
  name: 'temporal' | 'mongo' | 'codec';
  /** 'temporal dev server', 'ferretdb', 'mongod', or 'external'. */
  kind: string;
  state: ComponentState;
  /** Set by `up`: what this call did about the component. */
  origin?: 'started' | 'reused' | 'external';
  pid: number | null;
  address: string | null;
  uiUrl?: string | null;
  logFile: string | null;
  dataPath?: string | null;
  note?: string;
}

export interface StackStatus {
  dataDir: string;
  components: ComponentView[];
}
