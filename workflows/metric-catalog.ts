/*
 * Every metric the worker exports, in one place: the workflow and the
 * activities record through it, the exporter takes its histogram buckets from
 * it, and docs/metrics.md and the dashboards use these names. Names follow
 * Prometheus conventions (the SDK's exporter adds no suffix): counters end in
 * `_total`, durations are in seconds and end in `_seconds`, ratios in `_ratio`.
 *
 * Temporal adds `namespace` and `taskQueue` to every one of them, and
 * `workflowType` or `activityType` by where it was recorded. Counters recorded
 * by workflow code are not recorded again when the workflow replays.
 */

export type MetricKind = 'counter' | 'histogram' | 'gauge';
export type Capability = 'sessions' | 'tools' | 'mcp' | 'memory' | 'model';

export interface MetricSpec {
  name: string;
  kind: MetricKind;
  capability: Capability;
  help: string;
  /** Labels besides Temporal's own. */
  labels: readonly string[];
  /** Histograms: float values (seconds, ratios) or integers. */
  valueType?: 'int' | 'float';
  buckets?: readonly number[];
}

const SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800];
const RATIO = [0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1];
const SMALL_COUNT = [0, 1, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 50];

const spec = <N extends string>(s: MetricSpec & { name: N }) => s;

export const METRICS = {
  // Sessions
  turns: spec({ name: 'agent_turns_total', kind: 'counter', capability: 'sessions', help: 'Turns by outcome (completed, step_limit, interrupted, failed, budget_exceeded)', labels: ['outcome'] }),
  summaryFolds: spec({ name: 'agent_summary_folds_total', kind: 'counter', capability: 'sessions', help: 'Context compressions: evicted turns folded into the summary, by result (ok, failed; compacted: turns waiting for a fold past the window budget became summary notes)', labels: ['result'] }),
  contextShare: spec({ name: 'agent_prompt_context_share_ratio', kind: 'histogram', capability: 'sessions', help: 'Share of the prompt (by characters) taken by the summary and key facts, per turn', labels: [], valueType: 'float', buckets: RATIO }),
  windowTurns: spec({ name: 'agent_window_turns', kind: 'histogram', capability: 'sessions', help: 'Turns in the session window after each turn', labels: [], valueType: 'int', buckets: SMALL_COUNT }),
  continuedAsNew: spec({ name: 'agent_continue_as_new_total', kind: 'counter', capability: 'sessions', help: 'Runs continued as new (history budget reached)', labels: [] }),
  archives: spec({ name: 'agent_archives_total', kind: 'counter', capability: 'sessions', help: 'Sessions archived to MongoDB, by result (ok, conflict)', labels: ['result'] }),
  archiveSeconds: spec({ name: 'agent_archive_seconds', kind: 'histogram', capability: 'sessions', help: 'Time to write a session archive', labels: [], valueType: 'float', buckets: SECONDS }),
  restores: spec({ name: 'agent_restores_total', kind: 'counter', capability: 'sessions', help: 'Sessions restored from their archive', labels: [] }),
  restoreSeconds: spec({ name: 'agent_restore_seconds', kind: 'histogram', capability: 'sessions', help: 'Time to load a session archive on restore', labels: [], valueType: 'float', buckets: SECONDS }),

  // Tools
  toolCalls: spec({ name: 'agent_tool_calls_total', kind: 'counter', capability: 'tools', help: 'Tool calls by tool and status (ok, failed, timeout, declined, rejected)', labels: ['tool', 'status'] }),
  toolSeconds: spec({ name: 'agent_tool_call_seconds', kind: 'histogram', capability: 'tools', help: 'Tool run time (retries included, confirmation wait excluded)', labels: ['tool'], valueType: 'float', buckets: SECONDS }),
  stepsPerTurn: spec({ name: 'agent_turn_steps', kind: 'histogram', capability: 'tools', help: 'ReAct steps (model calls) per turn', labels: [], valueType: 'int', buckets: SMALL_COUNT }),
  confirmations: spec({ name: 'agent_confirmations_total', kind: 'counter', capability: 'tools', help: 'Decisions on held calls: approved or denied, and by whom (user, timeout, interrupt)', labels: ['decision', 'decided_by'] }),
  confirmationWait: spec({ name: 'agent_confirmation_wait_seconds', kind: 'histogram', capability: 'tools', help: 'Time a held call waited for its decision', labels: [], valueType: 'float', buckets: SECONDS }),

  // MCP (recorded by the worker's connections, labelled by server)
  mcpConnected: spec({ name: 'agent_mcp_connected', kind: 'gauge', capability: 'mcp', help: 'Whether the worker is connected to the server (1) or not (0)', labels: ['server'] }),
  mcpUptime: spec({ name: 'agent_mcp_uptime_ratio', kind: 'gauge', capability: 'mcp', help: 'Share of the time since the worker started that the server was connected', labels: ['server'], valueType: 'float' }),
  mcpConnects: spec({ name: 'agent_mcp_connects_total', kind: 'counter', capability: 'mcp', help: 'Connections established (the first one and every reconnect)', labels: ['server'] }),
  mcpDisconnects: spec({ name: 'agent_mcp_disconnects_total', kind: 'counter', capability: 'mcp', help: 'Connections lost', labels: ['server'] }),
  mcpReconnectSeconds: spec({ name: 'agent_mcp_reconnect_seconds', kind: 'histogram', capability: 'mcp', help: 'Time from losing a connection to having it again', labels: ['server'], valueType: 'float', buckets: SECONDS }),
  mcpRefreshes: spec({ name: 'agent_mcp_catalog_refreshes_total', kind: 'counter', capability: 'mcp', help: 'Tool list fetches by reason (list_changed, interval, requested) and whether the list changed', labels: ['server', 'reason', 'changed'] }),
  mcpSyncDelay: spec({ name: 'agent_mcp_tool_sync_delay_seconds', kind: 'histogram', capability: 'mcp', help: 'From a list_changed notification to the catalog holding the new list', labels: ['server'], valueType: 'float', buckets: SECONDS }),
  mcpCalls: spec({ name: 'agent_mcp_calls_total', kind: 'counter', capability: 'mcp', help: 'Tool calls to the server by outcome (ok, tool_error, error)', labels: ['server', 'outcome'] }),
  mcpErrors: spec({ name: 'agent_mcp_errors_total', kind: 'counter', capability: 'mcp', help: 'Failed tool calls to the server by class (unavailable, timeout, aborted, session_lost, connection, protocol)', labels: ['server', 'class'] }),

  // Memory
  recalls: spec({ name: 'agent_memory_recalls_total', kind: 'counter', capability: 'memory', help: 'Recalls by best tier found (strong, weak, none)', labels: ['tier'] }),
  recallSeconds: spec({ name: 'agent_memory_recall_seconds', kind: 'histogram', capability: 'memory', help: 'Recall latency', labels: [], valueType: 'float', buckets: SECONDS }),
  memoryWrites: spec({ name: 'agent_memory_writes_total', kind: 'counter', capability: 'memory', help: 'Memory candidates by result (accepted, rejected) and gate reason', labels: ['result', 'reason'] }),
  memoriesExpired: spec({ name: 'agent_memory_expired_total', kind: 'counter', capability: 'memory', help: 'Memories expired by the maintenance sweep', labels: [] }),
  citationChecks: spec({ name: 'agent_citation_checks_failed_total', kind: 'counter', capability: 'memory', help: 'Answers citing memory ids not recalled, by action (regenerated, removed)', labels: ['action'] }),

  // Model (every chat model request, labelled by purpose: step, summary, extraction)
  modelCalls: spec({ name: 'agent_model_calls_total', kind: 'counter', capability: 'model', help: 'Model calls (one scheduled call, its retries included) by purpose and how they ended (ok, error after the last attempt, cancelled)', labels: ['purpose', 'outcome'] }),
  modelAttempts: spec({ name: 'agent_model_attempts_total', kind: 'counter', capability: 'model', help: 'Model call attempts (requests sent) by purpose and outcome (ok, error, cancelled)', labels: ['purpose', 'outcome'] }),
  modelErrors: spec({ name: 'agent_model_errors_total', kind: 'counter', capability: 'model', help: 'Failed model call attempts by purpose and failure class', labels: ['purpose', 'class'] }),
  modelTtft: spec({ name: 'agent_model_time_to_first_token_seconds', kind: 'histogram', capability: 'model', help: 'Time to the first streamed token, by purpose', labels: ['purpose'], valueType: 'float', buckets: SECONDS }),
  modelSeconds: spec({ name: 'agent_model_call_seconds', kind: 'histogram', capability: 'model', help: 'Model call latency, to the last token, per successful attempt, by purpose', labels: ['purpose'], valueType: 'float', buckets: SECONDS }),
  modelTokens: spec({ name: 'agent_model_tokens_total', kind: 'counter', capability: 'model', help: 'Tokens reported by the model (usage), by purpose and direction (input, output)', labels: ['purpose', 'direction'] }),
} as const;

export type MetricKey = keyof typeof METRICS;

/** Histogram buckets for the exporter, by metric name. */
export function histogramBuckets(): Record<string, number[]> {
  const out: Record<string, number[]> = {};
  for (const m of Object.values(METRICS) as MetricSpec[]) if (m.kind === 'histogram' && m.buckets) out[m.name] = [...m.buckets];
  return out;
}
