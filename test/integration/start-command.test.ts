import { spawn, type ChildProcess } from 'node:child_process';
import { freePort } from '../support/net';
import { scrape } from '../../api/prometheus-text';
import { eventually, uniqueId } from '../support/test-env';

/*
 * The README's main command, `npm start`, on the stack the tests already
 * run: it brings up a worker, the API and the console, prints the console's
 * address and sign-in links, answers a turn with the scripted console model
 * (no model configured), and stops cleanly on SIGINT.
 */

let child: ChildProcess | undefined;
let out = '';

afterAll(async () => {
  if (child && child.exitCode === null) {
    child.kill('SIGKILL');
    await new Promise((r) => child!.once('exit', r));
  }
});

it('npm start brings up worker, API and console, prints the console URL, chats with the scripted model, and stops on Ctrl-C', async () => {
  const metricsPort = await freePort();
  const env: NodeJS.ProcessEnv = { ...process.env, API_PORT: '0', METRICS_PORT: String(metricsPort), TEMPORAL_TASK_QUEUE: uniqueId('tq-start'), API_TOKENS: '', API_TOKENS_FILE: '', FORCE_COLOR: '0' };
  delete env.OPENAI_API_KEY;
  delete env.OPENAI_BASE_URL;
  child = spawn(process.execPath, ['--import', 'tsx', 'scripts/start.ts'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const consoleUrl = await eventually(() => /^Console: (http:\/\/\S+)\/$/m.exec(out)?.[1] ?? (child!.exitCode !== null ? Promise.reject(new Error(out)) : null), 'the console address', 60_000);
  expect(out).toContain('scripted console model');
  const links = [...out.matchAll(/token for (\S+) \(([^)]*)\): (\S+)/g)];
  expect(links.map((l) => l[1])).toEqual(['local/ana', 'local/boss']);
  const [ana, boss] = links.map((l) => l[3]!);
  // Tokens are printed for pasting, never put in a URL.
  expect(out).not.toMatch(/#token=|\?token=/);

  const page = await fetch(`${consoleUrl}/`);
  expect(page.status).toBe(200);
  expect(await page.text()).toContain('/assets/app.js');
  expect((await fetch(`${consoleUrl}/assets/app.js`)).status).toBe(200);
  const auth = (token: string) => ({ authorization: `Bearer ${token}` });
  expect(await (await fetch(`${consoleUrl}/v1/me`, { headers: auth(boss!) })).json()).toMatchObject({ tenant: 'local', user: 'boss', roles: ['user', 'approver', 'admin'] });

  const sessionId = uniqueId('start');
  const res = await fetch(`${consoleUrl}/v1/sessions/${sessionId}/messages`, {
    method: 'POST',
    headers: { ...auth(ana!), 'content-type': 'application/json' },
    body: JSON.stringify({ text: 'hello there', waitForTurn: true }),
  });
  expect(res.status).toBe(200);
  const body = (await res.json()) as { turn: { outcome: string; text: string } };
  expect(body.turn.outcome).toBe('completed');
  expect(body.turn.text).toContain('You said: "hello there"');
  await fetch(`${consoleUrl}/v1/sessions/${sessionId}/end`, { method: 'POST', headers: auth(ana!) });
  // Both metrics endpoints answer, as printed.
  expect(out).toContain(`Metrics: worker http://127.0.0.1:${metricsPort}/metrics, API ${consoleUrl}/metrics`);
  const worker = await eventually(async () => {
    const m = await scrape(`http://127.0.0.1:${metricsPort}/metrics`);
    return m.get('agent_turns_total') ? m : null;
  }, 'the turn in the worker metrics');
  expect(worker.get('agent_turns_total')!.metrics.some((s) => s.labels.outcome === 'completed' && s.value === 1)).toBe(true);
  expect((await scrape(`${consoleUrl}/metrics`)).get('agent_api_requests_total')?.type).toBe('counter');

  child.kill('SIGINT');
  const code = await new Promise<number | null>((r) => child!.once('exit', (c) => r(c)));
  expect(code).toBe(0);
  expect(out).toContain('stopping the API, the console and the worker');
}, 120_000);
