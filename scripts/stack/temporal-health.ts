import { Connection } from '@temporalio/client';
import { errorMessage, StartupFailedError } from './errors';
import { SESSION_SEARCH_ATTRIBUTES } from './search-attributes';
import { sleep } from './wait';

/** grpc.health.v1 ServingStatus.SERVING */
const SERVING = 1;
/** temporal.api.enums.v1.IndexedValueType, by the names the CLI flags use. */
const INDEXED_VALUE_TYPE = { Text: 1, Keyword: 2, Int: 3, Double: 4, Bool: 5, Datetime: 6, KeywordList: 7 } as const;
const CALL_TIMEOUT_MS = 5_000;

/**
 * One health probe: the frontend answers gRPC health, the namespace exists,
 * and visibility answers a list (the first thing workers and the UI need).
 * Throws with the reason when any of them is not ready.
 */
export async function probeTemporal(address: string, namespace: string): Promise<void> {
  const connection = await Connection.connect({ address, connectTimeout: '2s' });
  try {
    await connection.withDeadline(Date.now() + CALL_TIMEOUT_MS, async () => {
      const health = await connection.healthService.check({});
      if (health.status !== SERVING) throw new Error(`frontend health status is ${String(health.status)}, not SERVING`);
      await connection.workflowService.describeNamespace({ namespace });
      await connection.workflowService.listWorkflowExecutions({ namespace, pageSize: 1 });
    });
  } finally {
    await connection.close();
  }
}

export interface WaitForTemporalOptions {
  address: string;
  namespace: string;
  timeoutMs: number;
  /** Stops waiting early when the server we started has died. */
  stillRunning?: () => boolean;
  /** Turns a failure into the message shown to the user (adds the log tail). */
  explain?: (message: string) => string;
}

/** Polls probeTemporal until it passes, the server dies, or time runs out. */
export async function waitForTemporal(options: WaitForTemporalOptions): Promise<void> {
  const explain = options.explain ?? ((message: string) => message);
  const deadline = Date.now() + options.timeoutMs;
  let lastError = 'no answer yet';
  for (;;) {
    if (options.stillRunning && !options.stillRunning()) {
      throw new StartupFailedError(explain(`temporal server exited while starting (last probe: ${lastError})`));
    }
    try {
      await probeTemporal(options.address, options.namespace);
      return;
    } catch (error) {
      lastError = errorMessage(error);
    }
    if (Date.now() > deadline) {
      throw new StartupFailedError(
        explain(`temporal at ${options.address} was not healthy after ${Math.round(options.timeoutMs / 1000)}s (last probe: ${lastError})`),
      );
    }
    await sleep(500);
  }
}

/**
 * Adds the session search attributes that are missing. The dev server
 * registers them from its flags, but a server we did not start (or one whose
 * flags were refused) may lack them. Returns the names it added.
 */
export async function ensureSearchAttributes(address: string, namespace: string): Promise<string[]> {
  const connection = await Connection.connect({ address, connectTimeout: '2s' });
  try {
    return await connection.withDeadline(Date.now() + CALL_TIMEOUT_MS * 2, async () => {
      const listed = await connection.operatorService.listSearchAttributes({ namespace });
      const existing = listed.customAttributes ?? {};
      const missing = Object.entries(SESSION_SEARCH_ATTRIBUTES).filter(([name]) => !(name in existing));
      if (missing.length === 0) return [];
      await connection.operatorService.addSearchAttributes({
        namespace,
        searchAttributes: Object.fromEntries(missing.map(([name, type]) => [name, INDEXED_VALUE_TYPE[type]])),
      });
      return missing.map(([name]) => name);
    });
  } finally {
    await connection.close();
  }
}
