import { foldScrape, type MetricsSample, type MetricsSeries } from '../../api/metrics-history';
import { parseExposition } from '../../api/prometheus-text';
import { chartOf, DASHBOARD, metricsOf, type ChartSpec } from '../../web/src/dashboard-charts';
import { gaugeOf, latestBy, latestTotal, meanOf, ratePerMinute, shares, type Chart } from '../../web/src/dashboard-data';
import { METRICS } from '../../workflows/metric-catalog';

/*
 * The console dashboard's figures from the API's samples: each sample keeps
 * every label of a metric, and a chart splits by the label it names.
 */

const T0 = Date.parse('2025-01-01T00:00:00Z');

/** A sample of worker scrapes (exposition text), taken `minute` minutes after T0. */
function sample(minute: number, ...scrapes: string[]): MetricsSample {
  const metrics: MetricsSample['metrics'] = {};
  for (const text of scrapes) foldScrape(parseExposition(text), metrics);
  return { at: new Date(T0 + minute * 60_000).toISOString(), metrics, unreachable: [] };
}

const seriesOf = (...samples: MetricsSample[]): MetricsSeries => ({ everyMs: 60_000, keep: 360, catalog: [], workers: [], samples });

/** Tool calls of two tools with two statuses, on two task queues: the exporter's own label order, tool first. */
const toolCalls = (n: { lookupOk: number; lookupTimeout: number; sendOk: number; sendTimeout: number }) => `# HELP agent_tool_calls_total Tool calls
# TYPE agent_tool_calls_total counter
agent_tool_calls_total{namespace="default",taskQueue="a",workflowType="session",tool="lookup",status="ok"} ${n.lookupOk}
agent_tool_calls_total{namespace="default",taskQueue="a",workflowType="session",tool="lookup",status="timeout"} ${n.lookupTimeout}
agent_tool_calls_total{namespace="default",taskQueue="a",workflowType="session",tool="send_mail",status="ok"} ${n.sendOk - 1}
agent_tool_calls_total{namespace="default",taskQueue="b",workflowType="session",tool="send_mail",status="ok"} 1
agent_tool_calls_total{namespace="default",taskQueue="a",workflowType="session",tool="send_mail",status="timeout"} ${n.sendTimeout}
`;

const byLabel = (chart: Chart) => Object.fromEntries(chart.lines.map((l) => [l.label, l.values]));

describe('the dashboard data', () => {
  const series = seriesOf(
    sample(0, toolCalls({ lookupOk: 10, lookupTimeout: 0, sendOk: 4, sendTimeout: 1 })),
    sample(1, toolCalls({ lookupOk: 16, lookupTimeout: 2, sendOk: 6, sendTimeout: 1 })),
    sample(3, toolCalls({ lookupOk: 16, lookupTimeout: 2, sendOk: 6, sendTimeout: 1 })),
  );

  it('keeps every catalog label of a metric per sample, summed over task queues and Temporal\'s own labels', () => {
    expect(series.samples[1]!.metrics.agent_tool_calls_total).toEqual([
      { labels: { tool: 'lookup', status: 'ok' }, value: 16 },
      { labels: { tool: 'lookup', status: 'timeout' }, value: 2 },
      { labels: { tool: 'send_mail', status: 'ok' }, value: 6 },
      { labels: { tool: 'send_mail', status: 'timeout' }, value: 1 },
    ]);
  });

  it('splits tool calls by status, not by tool, when the chart names status', () => {
    const chart = ratePerMinute(series, 'agent_tool_calls_total', { by: ['status'] });
    expect(chart.lines.map((l) => l.label)).toEqual(['ok', 'timeout']);
    // Minute 0 to 1: 6 + 2 ok, 2 timeouts; minute 1 to 3: nothing.
    expect(byLabel(chart)).toEqual({ ok: [8, 0], timeout: [2, 0] });
    expect(chart.times).toEqual([(T0 + 60_000) / 1000, (T0 + 180_000) / 1000]);
  });

  it('splits the same metric by tool when the chart names tool', () => {
    expect(byLabel(ratePerMinute(series, 'agent_tool_calls_total', { by: ['tool'] }))).toEqual({ lookup: [8, 0], send_mail: [2, 0] });
    expect(byLabel(ratePerMinute(series, 'agent_tool_calls_total', { by: ['tool'], where: { status: 'timeout' } }))).toEqual({ lookup: [2, 0], send_mail: [0, 0] });
  });

  it('takes shares by status over the interval, and a success rate within each tool', () => {
    expect(byLabel(shares(series, 'agent_tool_calls_total', 'status'))).toEqual({ ok: [0.8, null], timeout: [0.2, null] });
    expect(byLabel(shares(series, 'agent_tool_calls_total', 'status', { keys: ['ok'], within: 'tool' }))).toEqual({ lookup: [0.75, null], send_mail: [1, null] });
  });

  it('counts a label set whose total drops (a worker restart) from zero, without touching the others', () => {
    const restarted = seriesOf(
      sample(0, toolCalls({ lookupOk: 10, lookupTimeout: 3, sendOk: 4, sendTimeout: 1 })),
      sample(1, toolCalls({ lookupOk: 12, lookupTimeout: 1, sendOk: 4, sendTimeout: 1 })),
    );
    expect(byLabel(ratePerMinute(restarted, 'agent_tool_calls_total', { by: ['status'] }))).toEqual({ ok: [2], timeout: [1] });
  });

  it('histograms: the mean per interval, split by a label; gauges by server', () => {
    const text = (a: [number, number], b: [number, number], up: number) => `# TYPE agent_tool_call_seconds histogram
agent_tool_call_seconds_bucket{taskQueue="a",activityType="runTool",tool="lookup",le="+Inf"} ${a[0]}
agent_tool_call_seconds_sum{taskQueue="a",activityType="runTool",tool="lookup"} ${a[1]}
agent_tool_call_seconds_count{taskQueue="a",activityType="runTool",tool="lookup"} ${a[0]}
agent_tool_call_seconds_bucket{taskQueue="a",activityType="runTool",tool="send_mail",le="+Inf"} ${b[0]}
agent_tool_call_seconds_sum{taskQueue="a",activityType="runTool",tool="send_mail"} ${b[1]}
agent_tool_call_seconds_count{taskQueue="a",activityType="runTool",tool="send_mail"} ${b[0]}
# TYPE agent_mcp_connected gauge
agent_mcp_connected{server="docs"} ${up}
agent_mcp_connected{server="files"} 1
`;
    const s = seriesOf(sample(0, text([2, 1], [1, 3], 1)), sample(1, text([4, 2], [3, 4], 0)));
    expect(byLabel(meanOf(s, 'agent_tool_call_seconds', { by: ['tool'] }, 1000))).toEqual({ lookup: [500], send_mail: [500] });
    expect(byLabel(meanOf(s, 'agent_tool_call_seconds', { name: 'all' }))).toEqual({ all: [0.5] });
    expect(byLabel(gaugeOf(s, 'agent_mcp_connected', { by: ['server'] }))).toEqual({ docs: [0], files: [1] });
    expect(latestBy(s, 'agent_mcp_connected', 'server')).toEqual([
      ['docs', 0],
      ['files', 1],
    ]);
  });

  it('a metric no worker exported yet has no lines; one that first shows counts its whole total', () => {
    const s = seriesOf(sample(0), sample(1, toolCalls({ lookupOk: 3, lookupTimeout: 0, sendOk: 1, sendTimeout: 0 })));
    expect(ratePerMinute(s, 'agent_model_errors_total', { by: ['class'] }).lines).toEqual([]);
    expect(byLabel(ratePerMinute(s, 'agent_tool_calls_total', { by: ['status'] }))).toEqual({ ok: [4], timeout: [0] });
    expect(latestTotal(s, 'agent_tool_calls_total')).toBe(4);
    expect(latestTotal(s, 'agent_tool_calls_total', { tool: 'lookup' })).toBe(3);
    expect(latestTotal(seriesOf(), 'agent_turns_total')).toBe(0);
  });
});

describe('the dashboard page\'s charts', () => {
  const charts: ChartSpec[] = DASHBOARD.flatMap((s) => [...s.charts]);

  it('plot every metric of the catalog, each in its own capability\'s section', () => {
    const charted = new Set(charts.flatMap(metricsOf));
    expect(Object.values(METRICS).map((m) => m.name).filter((name) => !charted.has(name))).toEqual([]);
    const capabilityOf = new Map<string, string>(Object.values(METRICS).map((m) => [m.name, m.capability]));
    for (const section of DASHBOARD) for (const c of section.charts) for (const m of metricsOf(c)) expect({ chart: c.title, capability: capabilityOf.get(m) }).toEqual({ chart: c.title, capability: section.capability });
  });

  it('split only by labels their metrics have, and have distinct titles', () => {
    const labelsOf = new Map<string, readonly string[]>(Object.values(METRICS).map((m) => [m.name, m.labels]));
    for (const c of charts) {
      for (const p of c.plots) {
        const used = p.kind === 'shares' ? [p.of, ...(p.within ? [p.within] : [])] : p.kind === 'ratio' ? [] : [...(p.split?.by ?? []), ...Object.keys(p.split?.where ?? {})];
        const metric = p.kind === 'ratio' ? p.top : p.metric;
        expect({ chart: c.title, unknown: used.filter((l) => !labelsOf.get(metric)?.includes(l)) }).toEqual({ chart: c.title, unknown: [] });
      }
    }
    expect(new Set(charts.map((c) => c.title)).size).toBe(charts.length);
  });

  it('"Tool calls per minute by status" and "MCP calls per minute by outcome" draw one line per status or outcome', () => {
    const mcp = (ok: number, errors: number) => `# TYPE agent_mcp_calls_total counter
agent_mcp_calls_total{server="docs",outcome="ok"} ${ok}
agent_mcp_calls_total{server="docs",outcome="error"} ${errors}
agent_mcp_calls_total{server="files",outcome="ok"} ${ok}
`;
    const s = seriesOf(
      sample(0, toolCalls({ lookupOk: 1, lookupTimeout: 0, sendOk: 1, sendTimeout: 0 }), mcp(1, 0)),
      sample(1, toolCalls({ lookupOk: 2, lookupTimeout: 1, sendOk: 1, sendTimeout: 0 }), mcp(3, 1)),
    );
    const titled = (title: string) => chartOf(s, charts.find((c) => c.title === title)!);
    expect(byLabel(titled('Tool calls per minute by status'))).toEqual({ ok: [1], timeout: [1] });
    expect(byLabel(titled('Tool call outcomes, share'))).toEqual({ ok: [0.5], timeout: [0.5] });
    expect(byLabel(titled('MCP calls per minute by outcome'))).toEqual({ error: [1], ok: [4] });
  });
});
