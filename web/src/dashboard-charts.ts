/*
 * What the dashboard plots, per capability: each chart names the metrics it
 * reads and the label its lines are split by, so the page draws them all the
 * same way and a test can tell which catalog metrics have no chart.
 */

import type { Capability } from '../../workflows/metric-catalog';
import { combine, gaugeOf, meanOf, ratePerMinute, ratio, shares, type Chart, type MetricName, type MetricsSeries, type Split } from './dashboard-data';
import { exhausted } from './never';

/** One set of lines on a chart. */
export type Plot =
  | { kind: 'rate'; metric: MetricName; split?: Split }
  | { kind: 'shares'; metric: MetricName; of: string; keys?: readonly string[]; within?: string }
  | { kind: 'mean'; metric: MetricName; split?: Split; scale?: number }
  | { kind: 'ratio'; top: MetricName; bottom: MetricName; name: string }
  | { kind: 'gauge'; metric: MetricName; split?: Split };

export interface ChartSpec {
  title: string;
  unit: string;
  digits?: number;
  plots: readonly Plot[];
}

export interface DashboardSection {
  capability: Capability;
  heading: string;
  charts: readonly ChartSpec[];
}

const rate = (metric: MetricName, split?: Split): Plot => ({ kind: 'rate', metric, split });
const mean = (metric: MetricName, split: Split, scale?: number): Plot => ({ kind: 'mean', metric, split, scale });
const MS = 1000;

export const DASHBOARD: readonly DashboardSection[] = [
  {
    capability: 'sessions',
    heading: 'Sessions',
    charts: [
      { title: 'Turns per minute by outcome', unit: '/min', plots: [rate('agent_turns_total', { by: ['outcome'] })] },
      { title: 'Summary folds per turn', unit: '', digits: 2, plots: [{ kind: 'ratio', top: 'agent_summary_folds_total', bottom: 'agent_turns_total', name: 'folds per turn' }] },
      { title: 'Summary and key facts, share of the prompt', unit: '', digits: 2, plots: [mean('agent_prompt_context_share_ratio', { name: 'share' })] },
      { title: 'Turns in the window (mean)', unit: '', plots: [mean('agent_window_turns', { name: 'turns' })] },
      {
        title: 'Continued as new, archived and restored per minute',
        unit: '/min',
        digits: 2,
        plots: [
          rate('agent_continue_as_new_total', { name: 'continued as new' }),
          rate('agent_archives_total', { by: ['result'], name: ([result]) => `archived (${result})` }),
          rate('agent_restores_total', { name: 'restored' }),
        ],
      },
      { title: 'Archive and restore time (mean, ms)', unit: ' ms', digits: 0, plots: [mean('agent_archive_seconds', { name: 'archive' }, MS), mean('agent_restore_seconds', { name: 'restore' }, MS)] },
    ],
  },
  {
    capability: 'tools',
    heading: 'Tools',
    charts: [
      { title: 'Tool calls per minute by status', unit: '/min', plots: [rate('agent_tool_calls_total', { by: ['status'] })] },
      { title: 'Tool call outcomes, share', unit: '', digits: 2, plots: [{ kind: 'shares', metric: 'agent_tool_calls_total', of: 'status' }] },
      { title: 'Tool success rate by tool', unit: '', digits: 2, plots: [{ kind: 'shares', metric: 'agent_tool_calls_total', of: 'status', keys: ['ok'], within: 'tool' }] },
      { title: 'Tool timeouts per minute by tool', unit: '/min', plots: [rate('agent_tool_calls_total', { by: ['tool'], where: { status: 'timeout' } })] },
      { title: 'Tool run time by tool, confirmation wait excluded (mean, s)', unit: ' s', digits: 2, plots: [mean('agent_tool_call_seconds', { by: ['tool'] })] },
      { title: 'Steps per turn (mean)', unit: '', plots: [mean('agent_turn_steps', { name: 'steps' })] },
      {
        title: 'Approvals and denials per minute',
        unit: '/min',
        digits: 2,
        plots: [rate('agent_confirmations_total', { by: ['decision', 'decided_by'], name: ([decision, by]) => `${decision} by ${by}` })],
      },
      { title: 'Confirmation wait (mean, s)', unit: ' s', plots: [mean('agent_confirmation_wait_seconds', { name: 'wait' })] },
    ],
  },
  {
    capability: 'mcp',
    heading: 'MCP',
    charts: [
      { title: 'Connected by server (share of workers: 1 all up, 0 all down)', unit: '', digits: 0, plots: [{ kind: 'gauge', metric: 'agent_mcp_connected', split: { by: ['server'] } }] },
      { title: 'Uptime by server (share since each worker started, mean over workers)', unit: '', digits: 2, plots: [{ kind: 'gauge', metric: 'agent_mcp_uptime_ratio', split: { by: ['server'] } }] },
      {
        title: 'Connects and disconnects per minute by server',
        unit: '/min',
        digits: 2,
        plots: [
          rate('agent_mcp_connects_total', { by: ['server'], name: ([server]) => `${server} connects` }),
          rate('agent_mcp_disconnects_total', { by: ['server'], name: ([server]) => `${server} disconnects` }),
        ],
      },
      { title: 'Reconnect time (mean, s)', unit: ' s', digits: 2, plots: [mean('agent_mcp_reconnect_seconds', { name: 'reconnect' })] },
      {
        title: 'Catalog refreshes per minute by reason',
        unit: '/min',
        digits: 2,
        plots: [rate('agent_mcp_catalog_refreshes_total', { by: ['reason', 'changed'], name: ([reason, changed]) => `${reason} (${changed === 'true' ? 'changed' : 'unchanged'})` })],
      },
      { title: 'Tool sync delay after list_changed (mean, ms)', unit: ' ms', plots: [mean('agent_mcp_tool_sync_delay_seconds', { name: 'sync delay' }, MS)] },
      { title: 'MCP calls per minute by outcome', unit: '/min', plots: [rate('agent_mcp_calls_total', { by: ['outcome'] })] },
      { title: 'MCP errors per minute by class', unit: '/min', plots: [rate('agent_mcp_errors_total', { by: ['class'] })] },
    ],
  },
  {
    capability: 'memory',
    heading: 'Memory',
    charts: [
      { title: 'Recall by best tier, share', unit: '', digits: 2, plots: [{ kind: 'shares', metric: 'agent_memory_recalls_total', of: 'tier', keys: ['strong', 'weak', 'none'] }] },
      { title: 'Recall latency (mean, ms)', unit: ' ms', plots: [mean('agent_memory_recall_seconds', { name: 'recall' }, MS)] },
      { title: 'Memory writes per minute (accepted, rejected)', unit: '/min', plots: [rate('agent_memory_writes_total', { by: ['result'] })] },
      { title: 'Rejected memory writes per minute by gate reason', unit: '/min', plots: [rate('agent_memory_writes_total', { by: ['reason'], where: { result: 'rejected' } })] },
      { title: 'Expired memories swept per minute', unit: '/min', digits: 2, plots: [rate('agent_memory_expired_total', { name: 'expired' })] },
      { title: 'Citation checks failed per minute by action', unit: '/min', digits: 2, plots: [rate('agent_citation_checks_failed_total', { by: ['action'] })] },
    ],
  },
  {
    capability: 'model',
    heading: 'Model',
    charts: [
      { title: 'Model calls per minute', unit: '/min', plots: [rate('agent_model_calls_total', { by: ['outcome'] })] },
      { title: 'Model calls per minute by purpose', unit: '/min', plots: [rate('agent_model_calls_total', { by: ['purpose'] })] },
      { title: 'Model attempts per minute by outcome', unit: '/min', plots: [rate('agent_model_attempts_total', { by: ['outcome'] })] },
      { title: 'Model attempts per call (retries show above 1)', unit: '', digits: 2, plots: [{ kind: 'ratio', top: 'agent_model_attempts_total', bottom: 'agent_model_calls_total', name: 'attempts per call' }] },
      { title: 'Model errors per minute by class', unit: '/min', plots: [rate('agent_model_errors_total', { by: ['class'] })] },
      {
        title: 'Model latency and time to first token (mean, ms)',
        unit: ' ms',
        digits: 0,
        plots: [mean('agent_model_call_seconds', { name: 'latency' }, MS), mean('agent_model_time_to_first_token_seconds', { name: 'first token' }, MS)],
      },
      { title: 'Tokens per minute', unit: '/min', digits: 0, plots: [rate('agent_model_tokens_total', { by: ['direction'] })] },
    ],
  },
];

function plotted(series: MetricsSeries, plot: Plot): Chart {
  switch (plot.kind) {
    case 'rate':
      return ratePerMinute(series, plot.metric, plot.split);
    case 'shares':
      return shares(series, plot.metric, plot.of, { keys: plot.keys, within: plot.within });
    case 'mean':
      return meanOf(series, plot.metric, plot.split, plot.scale);
    case 'ratio':
      return ratio(series, plot.top, plot.bottom, plot.name);
    case 'gauge':
      return gaugeOf(series, plot.metric, plot.split);
    default:
      exhausted(plot);
      return { times: [], lines: [] };
  }
}

/** A chart's lines from the samples. */
export const chartOf = (series: MetricsSeries, spec: ChartSpec): Chart => combine(...spec.plots.map((p) => plotted(series, p)));

/** The metrics a chart reads. */
export const metricsOf = (spec: ChartSpec): MetricName[] => spec.plots.flatMap((p) => (p.kind === 'ratio' ? [p.top, p.bottom] : [p.metric]));
