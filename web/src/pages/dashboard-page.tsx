import { useMemo } from 'preact/hooks';
import { isAdmin, useSigned } from '../auth';
import { ProblemView } from '../components/problem-view';
import { TimeChart } from '../components/time-chart';
import { gaugeOf, latestTotal, meanOf, ratePerMinute, ratio, shares, type MetricsSeries } from '../dashboard-data';
import { usePoll } from '../poll';

/**
 * Each capability measured apart, over the last hour: the workers' metrics as
 * the API server samples them (GET /v1/metrics/series). Admins only: the
 * figures cover every tenant.
 */
export function DashboardPage() {
  const { api, me } = useSigned();
  const admin = isAdmin(me);
  const polled = usePoll((signal) => (admin ? api.get<MetricsSeries>('/v1/metrics/series', signal) : Promise.resolve(undefined)), 10_000, `dashboard-${admin}`);
  const s = polled.data;
  const charts = useMemo(() => (s ? buildCharts(s) : undefined), [s]);
  return (
    <section aria-labelledby="dashboard-title" class="dashboard">
      <h1 id="dashboard-title">Dashboard</h1>
      {!admin ? (
        <p role="note">The dashboard shows the figures of every tenant, so it needs the admin role ({me.tenant}/{me.user} has {me.roles.join(', ')}).</p>
      ) : polled.problem ? (
        <ProblemView problem={polled.problem} context="The metrics could not be read" />
      ) : !s || !charts ? (
        <p class="muted">Loading…</p>
      ) : (
        <>
          <p class="muted">
            Sampled every {Math.round(s.everyMs / 1000)} s from {s.workers.length} worker{s.workers.length === 1 ? '' : 's'}; {s.samples.length} samples kept (the last hour at most). Rates are per minute between samples.
            {s.samples.length < 2 ? ' Charts appear after the second sample.' : ''}
          </p>
          {s.samples.at(-1)?.unreachable.length ? (
            <p role="alert" class="problem">
              Not answering: {s.samples.at(-1)!.unreachable.map((u) => `${u.url} (${u.error})`).join('; ')}
            </p>
          ) : null}
          <h2>Sessions</h2>
          <p class="figures">
            Turns so far: {latestTotal(s, 'agent_turns_total')} · continued as new: {latestTotal(s, 'agent_continue_as_new_total')} · archived: {latestTotal(s, 'agent_archives_total')} · restored:{' '}
            {latestTotal(s, 'agent_restores_total')}
          </p>
          <div class="charts">
            <TimeChart title="Turns per minute by outcome" chart={charts.turns} unit="/min" />
            <TimeChart title="Summary folds per turn" chart={charts.folds} unit="" digits={2} />
            <TimeChart title="Summary and key facts, share of the prompt" chart={charts.contextShare} unit="" digits={2} />
            <TimeChart title="Turns in the window (mean)" chart={charts.window} unit="" />
          </div>
          <h2>Tools</h2>
          <div class="charts">
            <TimeChart title="Tool calls per minute by status" chart={charts.toolCalls} unit="/min" />
            <TimeChart title="Tool call outcomes, share" chart={charts.toolShares} unit="" digits={2} />
            <TimeChart title="Steps per turn (mean)" chart={charts.steps} unit="" />
            <TimeChart title="Confirmation wait (mean, s)" chart={charts.confirmWait} unit=" s" />
          </div>
          <h2>MCP</h2>
          <p class="figures">
            Servers connected now: {connectedNow(s)}
          </p>
          <div class="charts">
            <TimeChart title="Uptime by server (share since the worker started)" chart={charts.mcpUptime} unit="" digits={2} />
            <TimeChart title="MCP calls per minute by outcome" chart={charts.mcpCalls} unit="/min" />
            <TimeChart title="Reconnect time (mean, s)" chart={charts.mcpReconnect} unit=" s" digits={2} />
            <TimeChart title="Tool sync delay after list_changed (mean, ms)" chart={charts.mcpSync} unit=" ms" />
          </div>
          <h2>Memory</h2>
          <div class="charts">
            <TimeChart title="Recall by best tier, share" chart={charts.recallTiers} unit="" digits={2} />
            <TimeChart title="Recall latency (mean, ms)" chart={charts.recallMs} unit=" ms" />
            <TimeChart title="Memory writes per minute (accepted, rejected)" chart={charts.writes} unit="/min" />
          </div>
          <h2>Model</h2>
          <div class="charts">
            <TimeChart title="Model calls per minute" chart={charts.modelCalls} unit="/min" />
            <TimeChart title="Model latency and time to first token (mean, ms)" chart={charts.modelMs} unit=" ms" digits={0} />
            <TimeChart title="Tokens per minute" chart={charts.tokens} unit="/min" digits={0} />
          </div>
        </>
      )}
    </section>
  );
}

function connectedNow(s: MetricsSeries): string {
  const servers = Object.entries(s.samples.at(-1)?.metrics.agent_mcp_connected?.values ?? {});
  if (servers.length === 0) return 'no MCP servers configured';
  return servers.map(([name, v]) => `${name} ${v >= 1 ? 'up' : 'down'}`).join(' · ');
}

function buildCharts(s: MetricsSeries) {
  const latency = meanOf(s, 'agent_model_call_seconds', 'latency', 1000);
  const ttft = meanOf(s, 'agent_model_time_to_first_token_seconds', 'first token', 1000);
  return {
    turns: ratePerMinute(s, 'agent_turns_total'),
    folds: ratio(s, 'agent_summary_folds_total', 'agent_turns_total', 'folds per turn'),
    contextShare: meanOf(s, 'agent_prompt_context_share_ratio', 'share'),
    window: meanOf(s, 'agent_window_turns', 'turns'),
    toolCalls: ratePerMinute(s, 'agent_tool_calls_total'),
    toolShares: shares(s, 'agent_tool_calls_total'),
    steps: meanOf(s, 'agent_turn_steps', 'steps'),
    confirmWait: meanOf(s, 'agent_confirmation_wait_seconds', 'wait'),
    recallTiers: shares(s, 'agent_memory_recalls_total', ['strong', 'weak', 'none']),
    recallMs: meanOf(s, 'agent_memory_recall_seconds', 'recall', 1000),
    writes: ratePerMinute(s, 'agent_memory_writes_total'),
    modelCalls: ratePerMinute(s, 'agent_model_calls_total'),
    modelMs: { times: latency.times, lines: [...latency.lines, ...ttft.lines] },
    tokens: ratePerMinute(s, 'agent_model_tokens_total'),
    mcpUptime: gaugeOf(s, 'agent_mcp_uptime_ratio'),
    mcpCalls: ratePerMinute(s, 'agent_mcp_calls_total'),
    mcpReconnect: meanOf(s, 'agent_mcp_reconnect_seconds', 'reconnect'),
    mcpSync: meanOf(s, 'agent_mcp_tool_sync_delay_seconds', 'sync delay', 1000),
  };
}
