import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MetricsHistory } from '../../api/metrics-history';

/*
 * The dashboard's samples when a worker restarts, misses a scrape, or sends
 * what no worker would. Two real /metrics endpoints over HTTP whose text the
 * test sets between samples. (metrics-history.test.ts: the window, basic auth.)
 */

interface Endpoint {
  url: string;
  text: string;
  down: boolean;
  server: Server;
}

async function endpoint(): Promise<Endpoint> {
  const e = { url: '', text: '', down: false } as Endpoint;
  e.server = createServer((_req, res) => {
    if (e.down) return void res.writeHead(503).end('down');
    res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' }).end(e.text);
  });
  await new Promise<void>((resolve) => e.server.listen(0, '127.0.0.1', resolve));
  e.url = `http://127.0.0.1:${(e.server.address() as AddressInfo).port}/metrics`;
  return e;
}

const turns = (completed: number, failed?: number) =>
  `# TYPE agent_turns_total counter\nagent_turns_total{outcome="completed"} ${completed}\n${failed === undefined ? '' : `agent_turns_total{outcome="failed"} ${failed}\n`}` +
  `# TYPE agent_tool_call_seconds histogram\nagent_tool_call_seconds_bucket{tool="t",le="+Inf"} ${completed}\nagent_tool_call_seconds_sum{tool="t"} ${completed / 10}\nagent_tool_call_seconds_count{tool="t"} ${completed}\n`;

let a: Endpoint;
let b: Endpoint;
beforeAll(async () => {
  [a, b] = await Promise.all([endpoint(), endpoint()]);
});
afterAll(async () => {
  await Promise.all([a, b].map((e) => new Promise((resolve) => e.server.close(resolve))));
});

it('a worker that restarts or misses a scrape never makes the summed totals go down or jump', async () => {
  const history = new MetricsHistory([a.url, b.url], { everyMs: 60_000, keep: 10 });
  const completed = () => history.series().samples.at(-1)!.metrics.agent_turns_total!.find((r) => r.labels.outcome === 'completed')!.value;
  const failed = () => history.series().samples.at(-1)!.metrics.agent_turns_total!.find((r) => r.labels.outcome === 'failed')?.value;
  const toolCount = () => history.series().samples.at(-1)!.metrics.agent_tool_call_seconds![0]!.count;

  a.text = turns(1_000, 7);
  b.text = turns(5_000);
  await history.sampleNow();
  expect([completed(), failed(), toolCount()]).toEqual([6_000, 7, 6_000]);

  // a restarts (its counters start again, and "failed" is not counted yet); b counts on.
  a.text = turns(2);
  b.text = turns(5_010);
  await history.sampleNow();
  expect([completed(), failed(), toolCount()]).toEqual([6_012, 7, 6_012]);

  // b misses a scrape: its last totals stand in, named unreachable.
  b.down = true;
  a.text = turns(5, 1);
  await history.sampleNow();
  expect(history.series().samples.at(-1)!.unreachable.map((u) => u.url)).toEqual([b.url]);
  expect([completed(), failed(), toolCount()]).toEqual([6_015, 8, 6_015]);

  // b is back, having counted 20 meanwhile: that much more, not its whole total again.
  b.down = false;
  b.text = turns(5_030);
  await history.sampleNow();
  expect([completed(), failed(), toolCount()]).toEqual([6_035, 8, 6_035]);
});

it('an endpoint that sends more than a worker ever would, or NaN and Inf values, is cut off or left out, and the others still count', async () => {
  // Reading 16 MB took over the usual 5 s on a loaded CI machine (the endpoint shares the test's event loop).
  const history = new MetricsHistory([a.url, b.url], { everyMs: 60_000, keep: 10, scrapeTimeoutMs: 60_000 });
  a.text = `# TYPE agent_turns_total counter\n${'agent_turns_total{outcome="completed"} 1\n'.repeat(500_000)}`; // 20 MB
  b.text = '# TYPE agent_turns_total counter\nagent_turns_total{outcome="completed"} 3\nagent_turns_total{outcome="failed"} NaN\nagent_turns_total{outcome="interrupted"} +Inf\n';
  await history.sampleNow();
  const sample = history.series().samples.at(-1)!;
  expect(sample.unreachable).toEqual([{ url: a.url, error: expect.stringMatching(/the answer is over 16777216 bytes/) }]);
  expect(sample.metrics.agent_turns_total).toEqual([{ labels: { outcome: 'completed' }, value: 3 }]);
});

it('a gauge is the mean over the workers that answered, not their sum', async () => {
  const history = new MetricsHistory([a.url, b.url], { everyMs: 60_000, keep: 10 });
  const gauge = (up: number, uptime: number) =>
    `# TYPE agent_mcp_connected gauge\nagent_mcp_connected{server="crm"} ${up}\n# TYPE agent_mcp_uptime_ratio gauge\nagent_mcp_uptime_ratio{server="crm"} ${uptime}\n`;
  a.down = false;
  b.down = false;
  a.text = gauge(1, 0.9);
  b.text = gauge(0, 0.5);
  await history.sampleNow();
  const metrics = history.series().samples.at(-1)!.metrics;
  expect(metrics.agent_mcp_connected).toEqual([{ labels: { server: 'crm' }, value: 0.5 }]);
  expect(metrics.agent_mcp_uptime_ratio![0]!.value).toBeCloseTo(0.7);
  // Both up: 1, as for one worker.
  b.text = gauge(1, 0.5);
  await history.sampleNow();
  expect(history.series().samples.at(-1)!.metrics.agent_mcp_connected).toEqual([{ labels: { server: 'crm' }, value: 1 }]);
});
