import { readFileSync } from 'node:fs';
import path from 'node:path';
import { METRICS } from '../../workflows/metric-catalog';

/* The Grafana dashboard in examples/ is built on the metric names the worker and the API server export. */

const file = path.join(__dirname, '../../examples/grafana/durable-agent-dashboard.json');
const dashboard = JSON.parse(readFileSync(file, 'utf8')) as {
  panels: Array<{ id: number; type: string; title: string; gridPos: { x: number; y: number; w: number; h: number }; targets?: Array<{ expr: string }> }>;
};
const API_METRICS = ['agent_api_requests_total', 'agent_api_request_seconds', 'agent_api_event_streams', 'agent_api_event_subscriptions', 'agent_api_events_sent_total'];
const exprs = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr));
const used = new Set(exprs.flatMap((e) => [...e.matchAll(/\b(agent_[a-z_]+?)(?:_bucket|_sum|_count)?\b(?=[{[\s)])/g)].map((m) => m[1]!)));

describe('the Grafana dashboard', () => {
  it('uses only metrics we export', () => {
    const known = new Set([...Object.values(METRICS).map((m) => m.name), ...API_METRICS]);
    expect([...used].filter((name) => !known.has(name))).toEqual([]);
  });

  it('plots every metric of the catalog', () => {
    expect(Object.values(METRICS).map((m) => m.name).filter((name) => !used.has(name))).toEqual([]);
  });

  it('has unique panel ids and panels that do not overlap', () => {
    const ids = dashboard.panels.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    const cells = new Set<string>();
    for (const p of dashboard.panels) {
      for (let x = p.gridPos.x; x < p.gridPos.x + p.gridPos.w; x++) {
        for (let y = p.gridPos.y; y < p.gridPos.y + p.gridPos.h; y++) {
          const cell = `${x},${y}`;
          expect({ panel: p.title, cell, taken: cells.has(cell) }).toEqual({ panel: p.title, cell, taken: false });
          cells.add(cell);
        }
      }
    }
  });

  it('filters by task queue with the label Temporal gives our metrics (MCP and API metrics are per process, not per queue)', () => {
    for (const e of exprs.filter((x) => /agent_(?!api_|mcp_)/.test(x))) expect(e).toContain('taskQueue=~"$task_queue"');
    for (const e of exprs.filter((x) => /agent_(api|mcp)_/.test(x))) expect(e).not.toContain('taskQueue');
  });
});
