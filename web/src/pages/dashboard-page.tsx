import { Fragment } from 'preact';
import { useMemo, useRef } from 'preact/hooks';
import type { Capability } from '../../../workflows/metric-catalog';
import { isAdmin, useSigned } from '../auth';
import { ProblemView } from '../components/problem-view';
import { TimeChart } from '../components/time-chart';
import { chartOf, DASHBOARD, metricsOf } from '../dashboard-charts';
import { latestBy, latestTotal, type MetricsSeries } from '../dashboard-data';
import { exhausted } from '../never';
import { usePoll } from '../poll';

/**
 * Each capability measured apart, over the last hour: the workers' metrics as
 * the API server samples them (GET /v1/metrics/series). Admins only: the
 * figures cover every tenant.
 */
export function DashboardPage() {
  const { api, me } = useSigned();
  const admin = isAdmin(me);
  // Each poll asks only for the samples taken since the newest one held, and adds them to those.
  const held = useRef<MetricsSeries | undefined>(undefined);
  const polled = usePoll(
    async (signal) => {
      if (!admin) return undefined;
      const newest = held.current?.samples.at(-1)?.at;
      const fresh = await api.get<MetricsSeries>(`/v1/metrics/series${newest ? `?after=${encodeURIComponent(newest)}` : ''}`, signal);
      held.current = newest && held.current ? { ...fresh, samples: [...held.current.samples, ...fresh.samples].slice(-fresh.keep) } : fresh;
      return held.current;
    },
    10_000,
    `dashboard-${admin}`,
  );
  const s = polled.data;
  const charts = useMemo(() => (s ? DASHBOARD.map((section) => ({ section, drawn: section.charts.map((spec) => ({ spec, chart: chartOf(s, spec) })) })) : undefined), [s]);
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
          {charts.map(({ section, drawn }) => (
            <Fragment key={section.capability}>
              <h2>{section.heading}</h2>
              <Figures capability={section.capability} s={s} />
              <div class="charts">
                {drawn.map(({ spec, chart }) => (
                  <TimeChart key={spec.title} title={spec.title} chart={chart} unit={spec.unit} digits={spec.digits} />
                ))}
              </div>
            </Fragment>
          ))}
          <NotCharted s={s} />
        </>
      )}
    </section>
  );
}

/** Running totals and the state now, above a capability's charts. */
function Figures({ capability, s }: { capability: Capability; s: MetricsSeries }) {
  switch (capability) {
    case 'sessions':
      return (
        <p class="figures">
          Turns so far: {latestTotal(s, 'agent_turns_total')} · continued as new: {latestTotal(s, 'agent_continue_as_new_total')} · archived: {latestTotal(s, 'agent_archives_total')} · restored:{' '}
          {latestTotal(s, 'agent_restores_total')}
        </p>
      );
    case 'mcp': {
      const servers = latestBy(s, 'agent_mcp_connected', 'server');
      return <p class="figures">Servers connected now: {servers.length === 0 ? 'no MCP servers configured' : servers.map(([name, v]) => `${name} ${v >= 1 ? 'up' : 'down'}`).join(' · ')}</p>;
    }
    case 'tools':
    case 'memory':
    case 'model':
      return null;
    default:
      return exhausted(capability);
  }
}

/** Metrics the server's catalog has that this page has no chart for (a newer worker, say): named, not hidden. */
function NotCharted({ s }: { s: MetricsSeries }) {
  const charted = new Set<string>(DASHBOARD.flatMap((section) => section.charts.flatMap(metricsOf)));
  const others = s.catalog.filter((m) => !charted.has(m.name));
  if (others.length === 0) return null;
  return (
    <>
      <h2>Not charted</h2>
      <ul class="figures">
        {others.map((m) => (
          <li key={m.name}>
            <code>{m.name}</code> ({m.capability}, {m.kind}): {m.help}
          </li>
        ))}
      </ul>
    </>
  );
}
