import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import puppeteer, { type Browser } from 'puppeteer-core';
import { AgentClient } from '../../client';
import { ensureChromium, HEADLESS_CHROMIUM_ARGS } from '../../scripts/browser';
import { ensureStack, stackStatus, stopStack, type StackInfo } from '../../scripts/stack';
import { workflowIdFor } from '../../workflows/messages';
import { historyText } from '../support/history-text';
import { freePort } from '../support/net';
import { TEST_ENCRYPTION_KEYS } from '../support/test-encryption';
import { sessionOptions, startTestEnv, uniqueId, type TestEnv } from '../support/test-env';

/*
 * With payload encryption on, `stack:up` starts the dev server's Web UI
 * pointed at a codec server it runs beside it, so an operator reads decrypted
 * payloads in the UI while the history itself holds only ciphertext. Checked
 * on a stack of its own (temporary data dir and ports) in a real Chromium.
 */

const CANARY = `uicanary${randomBytes(4).toString('hex')}`;
const lines: string[] = [];
let dataDir: string;
let stackEnv: NodeJS.ProcessEnv;
let info: StackInfo;
let env: TestEnv;
let browser: Browser | undefined;

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'durable-agent-ui-codec-'));
  stackEnv = { ...process.env, DURABLE_AGENT_DATA_DIR: dataDir, PAYLOAD_ENCRYPTION_KEYS: TEST_ENCRYPTION_KEYS };
  // Its own Temporal (the shared one's UI has no codec endpoint); the shared MongoDB is fine.
  delete stackEnv.TEMPORAL_ADDRESS;
  delete stackEnv.CODEC_SERVER_TOKEN;
  stackEnv.TEMPORAL_PORT = String(await freePort());
  stackEnv.TEMPORAL_UI_PORT = String(await freePort());
  stackEnv.CODEC_SERVER_PORT = String(await freePort());
  info = await ensureStack({ env: stackEnv, log: (line) => lines.push(line) });
  env = await startTestEnv({ name: 'ui-codec', configEnv: { TEMPORAL_ADDRESS: info.temporalAddress, PAYLOAD_ENCRYPTION_KEYS: TEST_ENCRYPTION_KEYS } });
}, 180_000);

afterAll(async () => {
  await browser?.close().catch(() => undefined);
  await env?.close();
  if (dataDir) {
    await stopStack({ env: stackEnv, log: () => undefined }).catch(() => undefined);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}, 60_000);

describe('the local stack with encryption on: Web UI through the codec server', () => {
  it('starts a codec server beside the dev server and gives the UI its endpoint, token in the path', async () => {
    expect(info.started).toEqual(expect.arrayContaining(['temporal', 'codec']));
    expect(info.codecUrl).toBe(`http://127.0.0.1:${stackEnv.CODEC_SERVER_PORT}`);
    const token = fs.readFileSync(path.join(dataDir, 'codec-token'), 'utf8').trim();
    expect(token).toMatch(/^[0-9a-f]{48}$/);
    expect((fs.statSync(path.join(dataDir, 'codec-token')).mode & 0o077) === 0).toBe(true);
    // The stack's output names where the codec server is, never its token.
    expect(lines.join('\n')).toContain(`codec (codec server): running (started now)`);
    expect(lines.join('\n')).not.toContain(token);
    // Without the token the codec server refuses to decode.
    const refused = await fetch(`${info.codecUrl}/decode`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"payloads":[]}' });
    expect(refused.status).toBe(401);
    const status = await stackStatus({ env: stackEnv });
    expect(status.components.find((c) => c.name === 'codec')).toMatchObject({ state: 'running', address: info.codecUrl });
  });

  it('a second stack:up reuses the codec server', async () => {
    const again = await ensureStack({ env: stackEnv, log: () => undefined });
    expect(again.started).toEqual([]);
    expect(again.codecUrl).toBe(info.codecUrl);
  });

  it('the history holds ciphertext, and the Web UI in Chromium shows the decrypted workflow input', async () => {
    // The canary rides in the session options' metadata (the workflow input); search attributes
    // (tenant, user, status) stay readable by design, so the visibility UI can filter on them.
    const agent = env.agent;
    const sessionId = uniqueId('ui');
    env.model.script([{ respond: { kind: 'text', text: 'Hello.' } }], { lane: sessionId });
    const { turnId } = await agent.send(sessionOptions(sessionId, { metadata: { ticket: CANARY } }), { text: 'hello' });
    await agent.waitForTurn(sessionId, turnId);
    const history = await env.client.workflow.getHandle(workflowIdFor(sessionId)).fetchHistory();
    expect(historyText(history)).not.toContain(CANARY);

    browser = await puppeteer.launch({ executablePath: ensureChromium(), headless: true, args: HEADLESS_CHROMIUM_ARGS });
    const page = await browser.newPage();
    const decodes: number[] = [];
    page.on('response', (res) => {
      // The UI posts to <endpoint>/decode, with a query string of its own.
      const url = new URL(res.url());
      if (url.origin === info.codecUrl && url.pathname.endsWith('/decode') && res.request().method() === 'POST') decodes.push(res.status());
    });
    const url = AgentClient.webUiUrl(info.uiUrl!, env.config.temporal.namespace, sessionId);
    await page.goto(url, { waitUntil: 'networkidle2', timeout: 60_000 });
    // The input (session options, with the owner) is shown decoded once the codec server answered.
    // (Runs in the page: `document` is the page's, typed loosely here since the project compiles without the DOM library.)
    const pageText = () => (globalThis as unknown as { document: { body: { innerText: string } } }).document.body.innerText;
    await page.waitForFunction(`document.body.innerText.includes(${JSON.stringify(CANARY)})`, { timeout: 60_000, polling: 500 });
    expect(decodes.length).toBeGreaterThan(0);
    expect(decodes.every((s) => s === 200)).toBe(true);
    expect(await page.evaluate(pageText)).not.toContain('binary/encrypted');
  }, 150_000);
});
