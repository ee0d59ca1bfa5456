import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MetricsHistory } from '../../api/metrics-history';

/*
 * The API server's samples of the workers' metrics, as the dashboard reads
 * them: all kept samples, or only those after a time (each poll then reads
 * each sample once), never more than `keep`.
 */

let server: Server;
let url: string;
let calls = 0;

beforeAll(async () => {
  server = createServer((req, res) => {
    // One path asks for basic auth, as a worker's /metrics behind a proxy may.
    if (req.url === '/private' && req.headers.authorization !== `Basic ${Buffer.from('scraper:s3cret').toString('base64')}`) {
      res.statusCode = 401;
      res.end();
      return;
    }
    calls += 1;
    res.setHeader('content-type', 'text/plain; version=0.0.4');
    res.end(`# HELP agent_turns_total Turns\n# TYPE agent_turns_total counter\nagent_turns_total{outcome="completed",taskQueue="q"} ${calls}\n`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

it('serves the samples after a given time only, oldest first, and keeps at most `keep`', async () => {
  const history = new MetricsHistory([url], { everyMs: 60_000, keep: 3 });
  for (let i = 0; i < 4; i++) {
    await history.sampleNow();
    // Samples a millisecond apart at least, so each has its own time.
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  const all = history.series();
  expect(all.keep).toBe(3);
  expect(all.samples).toHaveLength(3);
  const totals = (s: typeof all) => s.samples.map((x) => x.metrics.agent_turns_total?.[0]?.value);
  expect(totals(all)).toEqual([2, 3, 4]);
  const after = history.series(all.samples[0]!.at);
  expect(totals(after)).toEqual([3, 4]);
  expect(history.series(all.samples[2]!.at).samples).toEqual([]);
  // A time from before the oldest kept sample gives all of them.
  expect(totals(history.series(new Date(0).toISOString()))).toEqual([2, 3, 4]);
});

it('scrapes a worker whose address holds basic-auth credentials, and shows the address without them', async () => {
  const privateUrl = url.replace('http://', 'http://scraper:s3cret@').replace('/metrics', '/private');
  const history = new MetricsHistory([privateUrl], { everyMs: 60_000, keep: 1 });
  await history.sampleNow();
  const series = history.series();
  expect(series.samples[0]!.unreachable).toEqual([]);
  expect(series.samples[0]!.metrics.agent_turns_total?.[0]?.value).toBeGreaterThan(0);
  expect(JSON.stringify(series)).not.toContain('s3cret');
  // Wrong credentials: unreachable, and still not shown.
  const wrong = new MetricsHistory([privateUrl.replace('s3cret', 'guess')], { everyMs: 60_000, keep: 1 });
  await wrong.sampleNow();
  expect(wrong.series().samples[0]!.unreachable).toHaveLength(1);
  expect(JSON.stringify(wrong.series())).not.toContain('guess');
});
