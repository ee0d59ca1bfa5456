import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import type { ScriptedModelServerOptions } from '../../scripted-model';
import type { Budgets } from '../../activities/usage/budgets';
import type { NativeTool } from '../../activities/tools/native-tool';
import type { SessionOptionsInput } from '../../workflows/session-types';
import type { ProbeLog } from '../support/probe-tools';
import type { TestEnv } from '../support/test-env';

/** What a scenario needs from its environment; each scenario gets a worker, task queue, database and model of its own. */
export interface ScenarioEnvOptions {
  /** Add the probe tools (`local_sleepy`, `local_note`, `local_wipe`, `local_slow`, `local_forbidden`); their runs land in `ctx.probe`. */
  probeTools?: boolean;
  /** More native tools for the worker. */
  extraTools?: NativeTool[];
  /** Run the example report server as a real stdio MCP server (`mcp_report_*` tools); its events land in `ctx.mcpEventsPath`. */
  mcp?: boolean;
  /** Other MCP servers, as `mcpServers` entries (stdio scripts of test/support, say). */
  mcpServers?: Record<string, Record<string, unknown>>;
  /** Answers model requests no step was scripted for. */
  modelFallback?: ScriptedModelServerOptions['fallback'];
  /** Daily budgets for the worker (BUDGETS). */
  budgets?: Budgets;
  /** Activity interceptors for the worker: fault injectors that fail or hold an activity. */
  activityInterceptors?: ActivityInterceptorsFactory[];
}

export interface ScenarioContext {
  /** The real stack for this scenario: scripted model, worker, clients, database. */
  env: TestEnv;
  /** A fresh session id; the recorder records `session-<sessionId>` unless told otherwise. */
  sessionId: string;
  /** Session options for `sessionId`: the scenario's `session` defaults merged with `extra`. */
  options(extra?: Partial<SessionOptionsInput>): SessionOptionsInput;
  /** Runs of the probe tools, when `env.probeTools` is set. */
  probe: ProbeLog;
  /** Where the stdio MCP server writes its events, when `env.mcp` is set. */
  mcpEventsPath?: string;
  /** Record this run of the session's workflow instead of its latest one (e.g. the run that continued as new). */
  recordRun(runId: string): void;
  /** Fails the recording with `message` unless `condition` holds: a scenario proves it produced its behaviour. */
  check(condition: unknown, message: string): void;
  /** Writes a progress line. */
  log(message: string): void;
}

/**
 * One behaviour of the session workflow, produced against the real stack and
 * recorded as a history for the replay suite.
 */
export interface Scenario {
  /** Kebab-case; the history is written to `test/replay/histories/<name>.json`. */
  name: string;
  /** One line: what the recorded history exercises. */
  description: string;
  env?: ScenarioEnvOptions;
  /** Session option defaults for `ctx.options()`. */
  session?: Partial<SessionOptionsInput>;
  /**
   * After `run`, a session still running is sent `endSession` so its history
   * is complete. Set false for a scenario whose recorded run has already ended
   * on its own (idle archive, continue-as-new), to check that it did.
   */
  endSession?: boolean;
  run(ctx: ScenarioContext): Promise<void>;
}

/** Declares a scenario; a file in `test/replay/scenarios/` default-exports one (or an array of them). */
export function defineScenario(scenario: Scenario): Scenario {
  if (!/^[a-z0-9]+(?:-[a-z0-9]+)*$/.test(scenario.name)) throw new Error(`scenario name "${scenario.name}" must be kebab-case`);
  return scenario;
}
