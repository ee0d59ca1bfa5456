import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { mintToken, TokenBook, type ApiTokenEntry } from '../../api/auth';
import type { EventHub } from '../../api/event-hub';
import { MetricsHistory } from '../../api/metrics-history';
import { createApi, listen } from '../../api/server';
import { MemoryRepository } from '../../activities/memory/memory-repository';
import type { ChatRequest, StepResponse } from '../../scripted-model';
import { ensureChromium, HEADLESS_CHROMIUM_ARGS } from '../../scripts/browser';
import { buildConsole } from '../../web/build';
import { SESSION_ID_PATTERN as CONSOLE_SESSION_ID_PATTERN, workflowIdFor as consoleWorkflowIdFor } from '../../web/src/api-types';
import { workflowIdFor } from '../../workflows/messages';
import { SESSION_ID_PATTERN } from '../../workflows/session-types';
import { DAY, fact, userSource } from '../support/memory-fixtures';
import { probeTools, type ProbeLog } from '../support/probe-tools';
import { eventually, sessionOptions, startTestEnv, uniqueId, type TestEnv } from '../support/test-env';

/*
 * The web console in a real headless Chromium (Debian's), served by the real
 * API server in front of the real stack: a worker, Temporal, the scripted
 * model. Pages are found by role and label, as a person finds them.
 */

const SCREENSHOTS = path.resolve(__dirname, '../../.data/screenshots');
const TEMPORAL_UI = process.env.TEMPORAL_UI_URL ?? 'http://127.0.0.1:8233';
const log: ProbeLog = { runs: [] };
let env: TestEnv;
let hub: EventHub;
let base: string;
let closeServer: () => Promise<void>;
let browser: Browser;
const tokens = { ana: '', boss: '', eve: '', root: '' };
let history: MetricsHistory;
const pages: Page[] = [];
/** Everything the pages wrote to their console, and every uncaught error. */
const consoleLines: string[] = [];
const pageErrors: string[] = [];

beforeAll(async () => {
  // A build of its own: rebuilding web/dist in place would pull it from under suites running beside this one (npm run api checks it).
  const built = await buildConsole({ outDir: fs.mkdtempSync(path.join(os.tmpdir(), 'console-')) });
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  // Memories are seeded with the fixtures' word-hashing vectors, so the worker embeds queries the same way.
  env = await startTestEnv({ name: 'web', extraTools: probeTools(log), configEnv: { EMBEDDING_MODEL: 'offline-hash' } });
  const entries: ApiTokenEntry[] = [];
  const add = (key: keyof typeof tokens, tenant: string, user: string, roles: Array<'user' | 'approver' | 'admin'>) => {
    const { token, entry } = mintToken({ tenant, user, roles });
    tokens[key] = token;
    entries.push(entry);
  };
  add('ana', 'acme', 'ana', ['user']);
  add('boss', 'acme', 'boss', ['approver']);
  add('eve', 'evil', 'eve', ['user']);
  add('root', 'acme', 'root', ['admin']);
  // The dashboard's samples of this worker's metrics, taken by the test when it needs them.
  history = new MetricsHistory([env.metricsUrl], { everyMs: 3_600_000, keep: 360 });
  const api = createApi({ agent: env.agent, tokens: new TokenBook(entries), limits: { requestsPerMinute: 100_000 }, metricsHistory: history, console: { dir: built.outDir, temporalUiUrl: TEMPORAL_UI } });
  hub = api.hub;
  const server = await listen(api.app, 0);
  base = server.url;
  closeServer = server.close;
  browser = await puppeteer.launch({ executablePath: ensureChromium(), headless: true, args: HEADLESS_CHROMIUM_ARGS });
}, 120_000);

afterEach(async () => {
  await Promise.all(pages.splice(0).map((p) => p.close().catch(() => undefined)));
});

afterAll(async () => {
  await browser?.close().catch(() => undefined);
  await closeServer?.();
  hub?.close();
  await env?.close();
  // Nothing the pages logged holds a token.
  for (const token of Object.values(tokens)) expect(consoleLines.join('\n')).not.toContain(token);
});

// ---- helpers: what a person does ----

async function newPage(viewport = { width: 1280, height: 900 }): Promise<Page> {
  const page = await browser.newPage();
  pages.push(page);
  await page.setViewport(viewport);
  page.on('console', (m) => consoleLines.push(`${m.type()}: ${m.text()}`));
  page.on('pageerror', (err) => pageErrors.push(String(err)));
  return page;
}

const button = (name: string) => `::-p-aria([name="${name}"][role="button"])`;

/** Opens the console at `hash` and signs in with the token, as pasted into the form. */
async function signedIn(token: string, hash = '#/sessions', viewport?: { width: number; height: number }): Promise<Page> {
  const page = await newPage(viewport);
  await page.goto(`${base}/${hash}`);
  await page.locator('::-p-aria(Bearer token)').fill(token);
  await page.locator(button('Sign in')).click();
  await page.locator(button('Sign out')).wait();
  return page;
}

/*
 * Code that runs in the page is written as strings (the root tsconfig has no DOM
 * types, and puppeteer sends functions as source anyway).
 */
const js = JSON.stringify;
/** Polled, not on mutation: streamed text changes a text node's data, which puppeteer's mutation polling does not watch. */
const POLL_MS = 40;
const textOf = (page: Page) => page.evaluate('document.body.innerText') as Promise<string>;

async function waitForText(page: Page, text: string, timeout = 20_000): Promise<void> {
  try {
    await page.waitForFunction(`document.body.innerText.includes(${js(text)})`, { timeout, polling: POLL_MS });
  } catch (err) {
    // What the page showed instead (its stream's state and any problem are in its text), for a failure worth reading.
    const shown = await textOf(page).catch(() => '(the page could not be read)');
    throw new Error(`${String(err)}: "${text}" not shown; the page's text ends with: ${JSON.stringify(shown.slice(-600))}`);
  }
}

/** In-page: the answer of a turn as shown, its streamed text parts joined; null before the turn shows. */
const answerJs = (turnId: string) =>
  `(() => { const s = document.querySelector(${js(`section[aria-label="Answer to ${turnId}"]`)}); return s ? Array.from(s.querySelectorAll('p[aria-live]'), (p) => p.textContent ?? '').join('\\n\\n') : null; })()`;

const answerOf = (page: Page, turnId: string) => page.evaluate(answerJs(turnId)) as Promise<string | null>;

/** Waits until the answer is part-way (some text, not all of `full`), or until the turn shows `outcome`. */
async function waitForAnswer(page: Page, turnId: string, mode: 'partial' | 'outcome', full: string, outcome = 'Completed', timeout = 30_000): Promise<void> {
  const condition =
    mode === 'partial'
      ? `(() => { const t = ${answerJs(turnId)} ?? ''; return t.length > 0 && t.length < ${full.length}; })()`
      : `Array.from(document.querySelectorAll(${js(`section[aria-label="Answer to ${turnId}"] p`)})).some((p) => p.textContent === ${js(outcome)})`;
  await page.waitForFunction(condition, { timeout, polling: POLL_MS });
}

/** Waits until the answer's text has at least `chars` characters. */
async function waitForChars(page: Page, turnId: string, chars: number): Promise<void> {
  await page.waitForFunction(`(${answerJs(turnId)} ?? '').length >= ${chars}`, { timeout: 20_000, polling: POLL_MS });
}

async function send(page: Page, text: string): Promise<void> {
  await page.locator('::-p-aria([name="Message"][role="textbox"])').fill(text);
  await page.locator(button('Send')).click();
}

async function screenshot(page: Page, name: string, element?: string): Promise<string> {
  const file = path.join(SCREENSHOTS, `${name}.png`);
  if (element) {
    const handle = await page.waitForSelector(element);
    await handle!.screenshot({ path: file });
  } else {
    await page.screenshot({ path: file, fullPage: true });
  }
  return file;
}

const api = (method: string, urlPath: string, token: string, body?: unknown) =>
  fetch(`${base}${urlPath}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });

function scriptWipe(sessionId: string, answer: string): void {
  env.model.script(
    [
      { respond: { kind: 'tool_calls', calls: [{ id: 'call_wipe', name: 'local_wipe', arguments: { confirmText: 'all' } }] } },
      { match: { hasToolResults: true }, respond: { kind: 'text', text: answer } },
    ],
    { lane: sessionId },
  );
}

const runsOf = (sessionId: string) => log.runs.filter((r) => r.key.startsWith(`${sessionId}:`));

async function waitForPending(sessionId: string): Promise<void> {
  await eventually(async () => {
    const view = (await (await api('GET', `/v1/sessions/${sessionId}`, tokens.ana)).json()) as { pendingConfirmations?: unknown[] };
    return (view.pendingConfirmations?.length ?? 0) > 0;
  }, 'the held call');
}

const STORY = 'Once upon a time a durable agent kept every word it said, even when the page it spoke to was closed and opened again.';

// ---- tests ----

describe('web console', () => {
  it('keeps its copy of the session id rule and the workflow id in step with the workflow', () => {
    expect(CONSOLE_SESSION_ID_PATTERN.source).toBe(SESSION_ID_PATTERN.source);
    expect(consoleWorkflowIdFor('abc')).toBe(workflowIdFor('abc'));
  });

  it('refuses an unknown token, signs in with a good one, and a new session streams its answer as it arrives', async () => {
    const page = await newPage();
    await page.goto(`${base}/#/sessions`);
    await page.locator('::-p-aria(Bearer token)').fill('dat_not-a-real-token');
    await page.locator(button('Sign in')).click();
    await waitForText(page, 'The bearer token is not known to this server.');
    await page.locator('::-p-aria(Bearer token)').fill(tokens.ana);
    await page.locator(button('Sign in')).click();
    await waitForText(page, 'acme/ana (user)');
    expect(await page.evaluate('window.sessionStorage.length')).toBe(1);

    await page.locator(button('New session')).click();
    await page.waitForFunction(`window.location.hash.startsWith('#/sessions/')`);
    const sessionId = decodeURIComponent(((await page.evaluate('window.location.hash')) as string).slice('#/sessions/'.length));
    expect(sessionId).toMatch(SESSION_ID_PATTERN);
    await waitForText(page, 'your first message starts it');
    env.model.script([{ respond: { kind: 'text', text: STORY, chunkSize: 6, delayMs: 60 } }], { lane: sessionId });
    await send(page, 'Tell me a short story.');
    // Seen part-way, then whole: the text arrived in steps.
    await waitForAnswer(page, 'turn-1', 'partial', STORY);
    await waitForAnswer(page, 'turn-1', 'outcome', STORY);
    expect(await answerOf(page, 'turn-1')).toBe(STORY);
    await waitForText(page, 'Tell me a short story.');

    // The inspector: version, counters, and the workflow in the Temporal Web UI.
    const link = await page.waitForSelector(`::-p-aria(Open ${workflowIdFor(sessionId)} in the Temporal Web UI)`);
    expect(await link!.evaluate((a) => (a as unknown as { href: string }).href)).toBe(`${TEMPORAL_UI}/namespaces/${env.config.temporal.namespace}/workflows/${workflowIdFor(sessionId)}`);
    // The view read while the turn ran may still be on screen when the answer is whole: the one read at the
    // turn's end replaces it (the page reads the session again when a turn completes).
    await page.waitForFunction(`/modelCalls\\s*1/.test(document.querySelector('aside')?.innerText ?? '')`, { polling: POLL_MS, timeout: 20_000 });
    const inspector = (await page.evaluate(`document.querySelector('aside').innerText`)) as string;
    expect(inspector).toMatch(/Version\s*1/);
    expect(inspector).toMatch(/modelCalls\s*1/);
    await screenshot(page, 'chat');
    await screenshot(page, 'inspector', '::-p-aria([name="Inspector"][role="complementary"])');
  });

  it('a sign-in whose check fails (the server busy) keeps nothing and says why, and the same token pasted again signs in', async () => {
    const page = await newPage();
    await page.setRequestInterception(true);
    let failNext = true;
    page.on('request', (req) => {
      if (failNext && req.url().endsWith('/v1/me')) {
        failNext = false;
        void req.respond({ status: 503, contentType: 'application/problem+json', body: JSON.stringify({ type: 'about:blank', title: 'Unavailable', status: 503, detail: 'Temporal is not answering.', failureType: 'TemporalUnavailable' }) });
      } else void req.continue();
    });
    await page.goto(`${base}/#/sessions`);
    await page.locator('::-p-aria(Bearer token)').fill(tokens.ana);
    await page.locator(button('Sign in')).click();
    await waitForText(page, 'Temporal is not answering.');
    expect(await page.evaluate('window.sessionStorage.length')).toBe(0);
    await page.locator('::-p-aria(Bearer token)').fill(tokens.ana);
    await page.locator(button('Sign in')).click();
    await waitForText(page, 'acme/ana (user)');
    expect(await page.evaluate('window.sessionStorage.length')).toBe(1);
  });

  it('an approver approves a held destructive call from the inbox: the tool runs exactly once and the cards update', async () => {
    const sessionId = uniqueId('web-approve');
    scriptWipe(sessionId, 'Wiped.');
    expect((await api('POST', `/v1/sessions/${sessionId}/messages`, tokens.ana, { text: 'wipe my notes' })).status).toBe(202);
    await waitForPending(sessionId);
    const page = await signedIn(tokens.boss, '#/approvals');
    await waitForText(page, 'acme/boss (approver)');
    const card = await page.waitForSelector(`::-p-aria([name="local_wipe in session ${sessionId}"][role="article"])`);
    expect(runsOf(sessionId)).toHaveLength(0);
    await screenshot(page, 'inbox');
    await (await card!.waitForSelector('::-p-aria([name="Reason (optional, the model is told)"][role="textbox"])'))!.type('checked with ana');
    await (await card!.waitForSelector(button('Approve')))!.click();
    await waitForText(page, 'Approved: checked with ana. The call runs now.');
    await eventually(() => runsOf(sessionId).length === 1, 'the wipe to run');

    // The session's own tool card shows the decision and the result.
    await page.goto(`${base}/#/sessions/${sessionId}`);
    await waitForAnswer(page, 'turn-1', 'outcome', 'Wiped.');
    const tool = await page.waitForSelector('::-p-aria([name="Tool call local_wipe"][role="article"])');
    const toolText = await tool!.evaluate((el) => (el as unknown as { innerText: string }).innerText);
    expect(toolText).toContain('Done');
    expect(toolText).toContain('Approved by acme/boss: checked with ana');
    expect(toolText).toContain('"wiped":true');
    expect(await answerOf(page, 'turn-1')).toBe('Wiped.');
    expect(runsOf(sessionId)).toHaveLength(1);
  });

  it('a held call longer than the card shows can be approved only once all of it is on screen, hidden characters shown by code point', async () => {
    const sessionId = uniqueId('web-long-args');
    // Harmless-looking padding, then the part that matters: under 4,000 characters as sent, but past what the card
    // shows at first once its 200 zero-width spaces are spelled out.
    const confirmText = `${'all notes, '.repeat(300)}${'\u200B'.repeat(200)}and the \u202Ebackups\u202C too`;
    env.model.script(
      [
        { respond: { kind: 'tool_calls', calls: [{ id: 'call_wipe', name: 'local_wipe', arguments: { confirmText } }] } },
        { match: { hasToolResults: true }, respond: { kind: 'text', text: 'Wiped everything.' } },
      ],
      { lane: sessionId },
    );
    expect((await api('POST', `/v1/sessions/${sessionId}/messages`, tokens.ana, { text: 'wipe my notes' })).status).toBe(202);
    await waitForPending(sessionId);
    const page = await signedIn(tokens.boss, '#/approvals');
    const card = await page.waitForSelector(`::-p-aria([name="local_wipe in session ${sessionId}"][role="article"])`);
    const approve = await card!.waitForSelector(button('Approve'));
    expect(await approve!.evaluate((b) => (b as unknown as { disabled: boolean }).disabled)).toBe(true);
    const before = await card!.evaluate((el) => (el as unknown as { innerText: string }).innerText);
    expect(before).toContain('Show the whole call before approving it.');
    expect(before).not.toContain('backups');
    await (await card!.waitForSelector('button.show-all'))!.click();
    const after = await card!.evaluate((el) => (el as unknown as { innerText: string }).innerText);
    expect(after).toContain('and the \u27e6U+202E\u27e7backups\u27e6U+202C\u27e7 too');
    expect(await approve!.evaluate((b) => (b as unknown as { disabled: boolean }).disabled)).toBe(false);
    await approve!.click();
    await waitForText(page, 'Approved. The call runs now.');
    await eventually(() => runsOf(sessionId).length === 1, 'the wipe to run');
  });

  it('the owner denies a held call from its approval card with a reason: the model is told, the tool never runs', async () => {
    const sessionId = uniqueId('web-deny');
    scriptWipe(sessionId, 'Okay, I left them.');
    const page = await signedIn(tokens.ana, `#/sessions/${sessionId}`);
    await waitForText(page, 'your first message starts it');
    await send(page, 'wipe my notes');
    const tool = await page.waitForSelector('::-p-aria([name="Tool call local_wipe"][role="article"])');
    await tool!.waitForSelector(button('Deny'));
    await waitForText(page, 'Waiting for approval');
    await (await tool!.waitForSelector('::-p-aria([name="Reason (optional, the model is told)"][role="textbox"])'))!.type('not today');
    await (await tool!.waitForSelector(button('Deny')))!.click();
    await waitForAnswer(page, 'turn-1', 'outcome', 'Okay, I left them.');
    expect(await answerOf(page, 'turn-1')).toBe('Okay, I left them.');
    const toolText = await tool!.evaluate((el) => (el as unknown as { innerText: string }).innerText);
    expect(toolText).toContain('Denied by acme/ana: not today');
    expect(runsOf(sessionId)).toHaveLength(0);
    // What the model got back for the call.
    const requests = env.model.requestsFor(sessionId);
    const messages = (requests[requests.length - 1]!.body as ChatRequest).messages as Array<{ role: string; content?: unknown }>;
    const result = JSON.parse(String(messages.filter((m) => m.role === 'tool').at(-1)?.content)) as { error: { type: string; message: string } };
    expect(result.error.type).toBe('ToolDeclined');
    expect(result.error.message).toMatch(/declined this action: not today/);
  });

  it('a call id the model uses again in the next step gets a card of its own, and approving it there runs that call once', async () => {
    const sessionId = uniqueId('web-reused-id');
    const wipe = { respond: { kind: 'tool_calls' as const, calls: [{ id: 'call_wipe', name: 'local_wipe', arguments: { confirmText: 'all' } }] } };
    env.model.script([wipe, wipe, { respond: { kind: 'text', text: 'Wiped on the second ask.' } }], { lane: sessionId });
    const page = await signedIn(tokens.ana, `#/sessions/${sessionId}`);
    await waitForText(page, 'your first message starts it');
    await send(page, 'wipe my notes');
    const cards = '::-p-aria([name="Tool call local_wipe"][role="article"])';
    const first = await page.waitForSelector(cards);
    await (await first!.waitForSelector(button('Deny')))!.click();
    // The second request under the same id: a second card, waiting, while the first keeps its denial.
    await page.waitForFunction(
      `(() => { const c = document.querySelectorAll('article[aria-label="Tool call local_wipe"]'); return c.length === 2 && c[1].innerText.includes('Waiting for approval'); })()`,
      { polling: POLL_MS, timeout: 20_000 },
    );
    const both = await page.$$(cards);
    const texts = await Promise.all(both.map((c) => c.evaluate((el) => (el as unknown as { innerText: string }).innerText)));
    expect(texts[0]).toContain('Denied by acme/ana');
    expect(texts[1]).not.toContain('Denied');
    // The composer sticks over the bottom of the page: scroll to the end, as a person would, to reach the card.
    await page.evaluate('window.scrollTo(0, document.documentElement.scrollHeight)');
    await (await both[1]!.waitForSelector(button('Approve')))!.click();
    await waitForAnswer(page, 'turn-1', 'outcome', 'Wiped on the second ask.');
    expect(runsOf(sessionId)).toHaveLength(1);
  });

  it('Stop ends a long answer: the turn is marked interrupted and its text stops growing', async () => {
    const sessionId = uniqueId('web-stop');
    const long = Array.from({ length: 60 }, (_, i) => `word${i}`).join(' ');
    env.model.script([{ respond: { kind: 'text', text: long, chunkSize: 5, delayMs: 200 } }], { lane: sessionId });
    const page = await signedIn(tokens.ana, `#/sessions/${sessionId}`);
    await waitForText(page, 'your first message starts it');
    await send(page, 'Count for a long time.');
    await waitForChars(page, 'turn-1', 10);
    await page.locator(button('Stop')).click();
    await waitForAnswer(page, 'turn-1', 'outcome', long, 'Interrupted');
    const atStop = await answerOf(page, 'turn-1');
    expect(atStop!.length).toBeLessThan(long.length);
    expect(long.startsWith(atStop!)).toBe(true);
    // The scripted model would have gone on for seconds; nothing more arrives.
    await new Promise((r) => setTimeout(r, 1_500));
    expect(await answerOf(page, 'turn-1')).toBe(atStop);
    expect(await page.$(button('Stop'))).toBeNull();
  });

  it('a page that was away while the session dropped the events it had not read goes on live from what is kept, saying what it missed', async () => {
    const sessionId = uniqueId('web-gap');
    // Long answers and the smallest history budget: the run continues as new soon, and its kept events (the last 64 KB) move past the page's.
    const long = Array.from({ length: 1_000 }, (_, i) => `w${i}`).join(' ');
    const answer = (req: ChatRequest): StepResponse => ({ kind: 'text', text: req.messages.at(-1)?.content === 'final' ? 'Back again.' : long });
    env.model.script(Array.from({ length: 80 }, () => ({ respond: answer })), { lane: sessionId });
    const options = sessionOptions(sessionId, { namespace: { tenant: 'acme', user: 'ana' }, memory: { enabled: false }, limits: { maxHistoryEvents: 200, windowMaxTurns: 200, windowMaxTokens: 1_000_000 } });
    const ana = env.agent.as({ tenant: 'acme', user: 'ana' });
    await ana.ask(options, { text: 'message 0' });
    const page = await signedIn(tokens.ana, `#/sessions/${sessionId}`);
    await waitForText(page, 'w999');
    await page.setOfflineMode(true);
    const away = Date.now();
    const handle = env.client.workflow.getHandle(workflowIdFor(sessionId));
    const firstRun = (await handle.describe()).runId;
    for (let i = 1; i < 70 && ((await handle.describe()).runId === firstRun || Date.now() - away < 7_000); i++) await ana.ask(options, { text: `message ${i}` });
    expect((await handle.describe()).runId).not.toBe(firstRun);
    // The server lets go of the session once it sees the page gone (at once when the browser closes the connection,
    // or once the page has taken nothing for the stall time) and the feed has lingered: only then are the events the
    // page missed gone from the server too. On a loaded machine that came after the loop above, and the page caught
    // up from the server's buffer, missing nothing.
    await eventually(() => !hub.follows(sessionId), "the server to let go of the away page's feed", 60_000);
    await page.setOfflineMode(false);
    await waitForText(page, 'were gone when this page caught up');
    // Live again: a message sent elsewhere shows up here.
    await ana.send(options, { text: 'final' });
    await waitForText(page, 'Back again.', 30_000);
  }, 180_000);

  it('a page whose session ended follows it again when a message from elsewhere restores it, and reads it again when a run that ended without archiving is replaced', async () => {
    const sessionId = uniqueId('web-again');
    env.model.script(
      [
        { respond: { kind: 'text', text: 'Before the archive.' } },
        { respond: { kind: 'text', text: 'Restored and answering.' } },
        { respond: { kind: 'text', text: 'A fresh start.' } },
      ],
      { lane: sessionId },
    );
    const options = sessionOptions(sessionId, { namespace: { tenant: 'acme', user: 'ana' }, memory: { enabled: false } });
    const ana = env.agent.as({ tenant: 'acme', user: 'ana' });
    await ana.ask(options, { text: 'one' });
    const page = await signedIn(tokens.ana, `#/sessions/${sessionId}`);
    await waitForText(page, 'Before the archive.');
    const handle = env.client.workflow.getHandle(workflowIdFor(sessionId));
    // Archived: the page says the run ended.
    await ana.end(sessionId);
    await waitForText(page, 'This run of the session has ended');
    // Restored by a message sent elsewhere (not from this page): its answer shows here, after the old one.
    await ana.send(options, { text: 'two' });
    await waitForText(page, 'Restored and answering.');
    expect(await textOf(page)).toContain('Before the archive.');
    // That run ends without archiving, and a message from elsewhere starts the session again from its first archive:
    // its offsets repeat the ended run's, which the page used to skip as shown. It reads the session again: the
    // archived turn, then the new one; the turn that was never archived is gone, as from the session itself.
    await eventually(async () => (await ana.getSession(sessionId)).currentTurnId === null, 'the restored turn to end');
    await handle.terminate('test: gone without an archive');
    await waitForText(page, 'This run of the session has ended');
    await ana.send(options, { text: 'three' });
    await waitForText(page, 'A fresh start.');
    const shown = await textOf(page);
    expect(shown).toContain('Before the archive.');
    expect(shown).not.toContain('Restored and answering.');
  }, 60_000);

  it('a reload mid-answer rebuilds the transcript from the event stream and keeps streaming, nothing lost or doubled', async () => {
    const sessionId = uniqueId('web-reload');
    const text = `${STORY} ${STORY.split('').reverse().join('')} The end.`;
    env.model.script([{ respond: { kind: 'text', text, chunkSize: 6, delayMs: 100 } }], { lane: sessionId });
    const page = await signedIn(tokens.ana, `#/sessions/${sessionId}`);
    await waitForText(page, 'your first message starts it');
    await send(page, 'A longer story, please.');
    await waitForChars(page, 'turn-1', 30);
    await page.reload();
    // Still signed in (the token is in this tab's session storage), and part-way through the answer.
    await waitForAnswer(page, 'turn-1', 'partial', text);
    await waitForAnswer(page, 'turn-1', 'outcome', text);
    expect(await answerOf(page, 'turn-1')).toBe(text);
    // The message sent before the reload comes back from the session's window.
    await waitForText(page, 'A longer story, please.');
  });

  it('another tenant sees no sessions and no approvals, and a direct link to a session shows not authorized, not its content', async () => {
    const sessionId = uniqueId('web-private');
    scriptWipe(sessionId, 'Never shown.');
    expect((await api('POST', `/v1/sessions/${sessionId}/messages`, tokens.ana, { text: 'secret plans: wipe my notes' })).status).toBe(202);
    await waitForPending(sessionId);
    try {
      // The held call is in acme's inbox (read from the server's visibility store, which may trail the session by a moment)...
      await eventually(async () => {
        const inbox = (await (await api('GET', '/v1/approvals', tokens.boss)).json()) as { approvals: Array<{ sessionId: string }> };
        return inbox.approvals.some((a) => a.sessionId === sessionId);
      }, 'the held call in the approvals inbox');

      // ...and nowhere for evil/eve.
      const page = await signedIn(tokens.eve, '#/sessions');
      await waitForText(page, 'evil/eve (user)');
      await waitForText(page, 'No running sessions.');
      await page.goto(`${base}/#/approvals`);
      await waitForText(page, 'Nothing is waiting for approval.');
      await page.goto(`${base}/#/sessions/${sessionId}`);
      await waitForText(page, 'You may not open this session');
      await page.waitForSelector('::-p-aria([role="alert"])');
      const shown = await textOf(page);
      expect(shown).toContain('NotAuthorized');
      expect(shown).not.toContain('secret plans');
      expect(shown).not.toContain('local_wipe');
      expect(await page.$('::-p-aria([name="Message"][role="textbox"])')).toBeNull();
    } finally {
      // Denied whatever happened above: a call left pending would put a badge on ana's Approvals link in later tests.
      expect((await api('POST', `/v1/sessions/${sessionId}/tool-calls/call_wipe/decision`, tokens.ana, { approved: false, reason: 'cleanup' })).status).toBe(204);
    }
  });

  it('on a phone-sized screen the chat is usable: one column, no horizontal scroll, navigation behind Menu', async () => {
    const sessionId = uniqueId('web-phone');
    const answer = `Here is a long link that must wrap: https://example.com/${'x'.repeat(120)} and a short line after it.`;
    env.model.script([{ respond: { kind: 'text', text: answer } }], { lane: sessionId });
    const page = await signedIn(tokens.ana, `#/sessions/${sessionId}`, { width: 375, height: 812 });
    await waitForText(page, 'your first message starts it');
    await send(page, 'Send me the link.');
    await waitForAnswer(page, 'turn-1', 'outcome', answer);
    const widths = (await page.evaluate('({ doc: document.documentElement.scrollWidth, body: document.body.scrollWidth, inner: window.innerWidth })')) as { doc: number; body: number; inner: number };
    expect(widths.inner).toBe(375);
    expect(widths.doc).toBeLessThanOrEqual(375);
    expect(widths.body).toBeLessThanOrEqual(375);
    // The navigation is folded away until Menu opens it.
    const navDisplay = () => page.evaluate(`getComputedStyle(document.getElementById('main-nav')).display`);
    expect(await navDisplay()).toBe('none');
    await page.locator(button('Menu')).click();
    expect(await navDisplay()).not.toBe('none');
    await page.waitForSelector('::-p-aria([name="Approvals"][role="link"])', { visible: true });
    await page.locator(button('Menu')).click();
    // The message box and Send fit the screen.
    for (const target of ['::-p-aria([name="Message"][role="textbox"])', button('Send')]) {
      const box = await (await page.waitForSelector(target))!.boundingBox();
      expect(box!.x).toBeGreaterThanOrEqual(0);
      expect(box!.x + box!.width).toBeLessThanOrEqual(375);
    }
    await screenshot(page, 'phone');
  });

  it('the sessions list, memory browser and dashboard render; a memory is deleted with its reason kept; every page has a screenshot', async () => {
    const now = new Date();
    const repo = new MemoryRepository(env.db);
    await repo.ensureIndexes();
    const common = { source: userSource('s-web', 'turn-1'), statedAt: now, expiresAt: new Date(now.getTime() + 30 * DAY) };
    const scoped = repo.forNamespace({ tenant: 'acme', user: 'ana' });
    await scoped.writeFact(fact('home city', 'Lisbon', common), { actor: { by: 'import' }, now });
    await scoped.writeFact(fact('team', 'platform', common), { actor: { by: 'import' }, now });

    // The inspector names the memories a turn recalled, with their text, for the owner.
    const recallSession = uniqueId('web-recall');
    env.model.script([{ respond: { kind: 'text', text: 'You live in Lisbon [mem:x].' } }], { lane: recallSession });
    const owner = await signedIn(tokens.ana, `#/sessions/${encodeURIComponent(recallSession)}`);
    await send(owner, 'What is my home city?');
    await waitForText(owner, 'You live in Lisbon');
    await owner.waitForFunction(
      `(() => { const a = document.querySelector('aside.inspector'); return !!a && a.innerText.includes("The user's home city is Lisbon."); })()`,
      { timeout: 20_000, polling: POLL_MS },
    );

    const page = await signedIn(tokens.boss, '#/sessions');
    await page.waitForSelector('::-p-aria([role="table"])');
    await screenshot(page, 'sessions');

    const ana = await signedIn(tokens.ana, '#/memories');
    await waitForText(ana, "The user's home city is Lisbon.");
    await waitForText(ana, "The user's team is platform.");
    await ana.locator('::-p-aria([name="Search"][role="searchbox"])').fill('lisbon');
    await ana.waitForFunction(`!document.body.innerText.includes("The user's team is platform.")`, { polling: POLL_MS });
    await screenshot(ana, 'memories');
    const listed = (await (await api('GET', '/v1/users/acme/ana/memories?q=Lisbon', tokens.ana)).json()) as { memories: Array<{ id: string }> };
    const card = await ana.waitForSelector(`::-p-aria([name="Memory ${listed.memories[0]!.id}"][role="article"])`);
    await (await card!.waitForSelector('::-p-aria([name="Reason for deleting (kept in the audit trail)"][role="textbox"])'))!.type('moved to Porto');
    await (await card!.waitForSelector(button('Delete')))!.click();
    await waitForText(ana, 'No memories match.');
    await ana.locator('::-p-aria([name="deleted"][role="checkbox"])').click();
    await waitForText(ana, "The user's home city is Lisbon.");
    expect(await textOf(ana)).toMatch(/Status\s*deleted/);
    // Its audit trail says who deleted it, when and why.
    const deletedCard = await ana.waitForSelector(`::-p-aria([name="Memory ${listed.memories[0]!.id}"][role="article"])`);
    await (await deletedCard!.waitForSelector(button('Show audit trail')))!.click();
    const trailJs = `(() => { const s = document.querySelector(${js(`section[aria-label="Audit trail of memory ${listed.memories[0]!.id}"]`)}); return s && !s.hidden ? s.innerText : ''; })()`;
    await ana.waitForFunction(`${trailJs}.includes('Reason: moved to Porto')`, { polling: POLL_MS });
    const trailText = (await ana.evaluate(trailJs)) as string;
    expect(trailText).toMatch(/v1 create.*by an import/);
    expect(trailText).toMatch(/v2 delete.*by the user acme\/ana/);
    await screenshot(ana, 'memory-audit');

    // The dashboard: an admin's, with every capability's charts from the worker's metrics; others are told it needs the role.
    await ana.goto(`${base}/#/dashboard`);
    await waitForText(ana, 'needs the admin role');
    await history.sampleNow();
    const busy = uniqueId('web-dash');
    // Two tools that end differently (one answers, one runs past its 1 s timeout), so a chart split by status shows statuses, not tool names.
    env.model.script(
      [
        { respond: { kind: 'tool_calls', calls: [{ id: 'call_quick', name: 'local_sleepy', arguments: { ms: 1, label: 'quick' } }, { id: 'call_slow', name: 'local_slow', arguments: {} }] } },
        { match: { hasToolResults: true }, respond: { kind: 'text', text: 'Measured.' } },
      ],
      { lane: busy },
    );
    await api('POST', `/v1/sessions/${busy}/messages`, tokens.ana, { text: 'measure me', waitForTurn: true });
    await history.sampleNow();
    const root = await signedIn(tokens.root, '#/dashboard');
    const titles = [
      'Turns per minute by outcome',
      'Continued as new, archived and restored per minute',
      'Archive and restore time (mean, ms)',
      'Tool calls per minute by status',
      'Tool success rate by tool',
      'Tool timeouts per minute by tool',
      'Tool run time by tool, confirmation wait excluded (mean, s)',
      'Approvals and denials per minute',
      'Connects and disconnects per minute by server',
      'Catalog refreshes per minute by reason',
      'MCP errors per minute by class',
      'Recall by best tier, share',
      'Expired memories swept per minute',
      'Citation checks failed per minute by action',
      'Model calls per minute',
      'Model attempts per minute by outcome',
      'Model errors per minute by class',
      'Tokens per minute',
    ];
    for (const title of titles) await waitForText(root, title);
    expect(await root.evaluate(`document.querySelectorAll('figure.chart canvas').length`)).toBeGreaterThanOrEqual(10);
    // The newest interval of a chart, as written out beside it (and in its canvas's accessible name).
    const latestOf = async (title: string) =>
      (await root.evaluate(`(() => { const f = Array.from(document.querySelectorAll('figure.chart')).find((f) => f.querySelector('figcaption').textContent === ${js(title)}); const p = f && f.querySelector('.chart-latest'); return p ? p.textContent : null; })()`)) as string | null;
    // The turn just made shows in the newest interval.
    expect(await latestOf('Turns per minute by outcome')).toMatch(/completed [1-9]/);
    // Split by status: one line per status, none per tool; the timeout is there to see.
    const byStatus = await latestOf('Tool calls per minute by status');
    expect(byStatus).toMatch(/\bok [1-9]/);
    expect(byStatus).toMatch(/\btimeout [1-9]/);
    expect(byStatus).not.toMatch(/local_/);
    expect(await latestOf('Tool call outcomes, share')).toMatch(/\bok 0\.50\b.*\btimeout 0\.50\b/);
    // Split by tool where the title says so.
    expect(await latestOf('Tool timeouts per minute by tool')).toMatch(/local_slow [1-9]/);
    expect(await latestOf('Tool success rate by tool')).toMatch(/local_sleepy 1\.00.*local_slow 0\.00/);
    expect(await textOf(root)).toContain('Servers connected now: no MCP servers configured');
    await screenshot(root, 'dashboard');

    for (const name of ['sessions', 'chat', 'inspector', 'inbox', 'memories', 'memory-audit', 'dashboard', 'phone']) {
      const file = path.join(SCREENSHOTS, `${name}.png`);
      expect({ name, bytes: fs.existsSync(file) ? fs.statSync(file).size : 0 }).toEqual({ name, bytes: expect.any(Number) });
      expect(fs.statSync(file).size).toBeGreaterThan(1_000);
    }
    // No script errors, and nothing refused by the server's Content-Security-Policy (the
    // only console errors are the browser's own notes on the 4xx answers the tests provoke).
    expect(pageErrors).toEqual([]);
    expect(consoleLines.filter((l) => l.startsWith('error: ') && !l.includes('Failed to load resource'))).toEqual([]);
  });

  it('is accessible on every page: each control named, each reached by Tab with a visible focus, text contrast at least 4.5:1', async () => {
    const sessionId = uniqueId('web-a11y');
    scriptWipe(sessionId, 'Wiped.');
    await api('POST', `/v1/sessions/${sessionId}/messages`, tokens.ana, { text: 'wipe my notes' });
    await waitForPending(sessionId);
    const signIn = await newPage();
    await signIn.goto(`${base}/#/sessions`);
    await signIn.locator('::-p-aria(Bearer token)').wait();
    const checked: Array<{ page: string; controls: number }> = [];
    const problems: string[] = [];
    const audit = async (page: Page, name: string) => {
      // Names as assistive technology computes them (Chromium's accessibility tree).
      const tree = await page.accessibility.snapshot({ interestingOnly: true });
      const walk = (node: { role?: string; name?: string; children?: unknown[] } | null | undefined): void => {
        if (!node) return;
        if (['button', 'textbox', 'searchbox', 'combobox', 'checkbox', 'link', 'radio'].includes(node.role ?? '') && !(node.name ?? '').trim()) problems.push(`${name}: a ${node.role} without a name`);
        for (const c of (node.children ?? []) as Array<typeof node>) walk(c);
      };
      walk(tree as never);
      // Every enabled control is reached by Tab, in turn, and shows where the focus is.
      const controls = (await page.evaluate(`Array.from(document.querySelectorAll('a[href], button:not([disabled]), input:not([disabled]), textarea:not([disabled]), select:not([disabled])')).filter((e) => e.offsetParent !== null).length`)) as number;
      const reached = new Set<string>();
      await page.evaluate('document.activeElement && document.activeElement.blur(); window.scrollTo(0, 0)');
      for (let i = 0; i < controls + 5; i++) {
        await page.keyboard.press('Tab');
        const focus = (await page.evaluate(`(() => {
          const e = document.activeElement;
          if (!e || e === document.body) return null;
          const st = getComputedStyle(e);
          const visible = (st.outlineStyle !== 'none' && parseFloat(st.outlineWidth) > 0) || st.boxShadow !== 'none';
          const all = Array.from(document.querySelectorAll('*'));
          return { key: all.indexOf(e) + ':' + e.tagName, visible, label: (e.getAttribute('aria-label') || e.textContent || e.getAttribute('name') || '').slice(0, 40) };
        })()`)) as { key: string; visible: boolean; label: string } | null;
        if (!focus) continue;
        reached.add(focus.key);
        if (!focus.visible) problems.push(`${name}: focus on "${focus.label}" is not visible`);
      }
      if (reached.size < controls) problems.push(`${name}: Tab reached ${reached.size} of ${controls} controls`);
      // WCAG AA: text against the background it is drawn on (the nearest opaque one), disabled controls exempt.
      const low = (await page.evaluate(`(() => {
        const rgb = (c) => (c.match(/[\\d.]+/g) || []).map(Number);
        const lum = ([r, g, b]) => { const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); }; return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b); };
        const bg = (e) => { for (let n = e; n; n = n.parentElement) { const c = rgb(getComputedStyle(n).backgroundColor); if (c.length === 3 || (c.length === 4 && c[3] > 0.9)) return c.slice(0, 3); } return [255, 255, 255]; };
        const out = [];
        for (const e of document.querySelectorAll('body *')) {
          if (e.closest('[disabled]') || e.offsetParent === null) continue;
          if (!Array.from(e.childNodes).some((n) => n.nodeType === 3 && n.textContent.trim())) continue;
          const fg = rgb(getComputedStyle(e).color).slice(0, 3);
          const [a, b] = [lum(fg), lum(bg(e))];
          const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
          if (ratio < 4.5) out.push(e.tagName + ' "' + e.textContent.trim().slice(0, 30) + '" ' + ratio.toFixed(2));
        }
        return out;
      })()`)) as string[];
      for (const l of low) problems.push(`${name}: low contrast ${l}`);
      checked.push({ page: name, controls });
    };
    await audit(signIn, 'sign-in');
    const ana = await signedIn(tokens.ana, `#/sessions/${encodeURIComponent(sessionId)}`);
    await ana.locator(button('Approve')).wait();
    await audit(ana, 'chat with an approval card');
    const boss = await signedIn(tokens.boss, '#/approvals');
    await boss.locator(button('Approve')).wait();
    await audit(boss, 'approvals');
    for (const hash of ['#/sessions', '#/memories']) {
      await boss.goto(`${base}/${hash}`);
      await boss.locator(button('Sign out')).wait();
      await new Promise((r) => setTimeout(r, 300));
      await audit(boss, hash);
    }
    await history.sampleNow();
    await history.sampleNow();
    const root = await signedIn(tokens.root, '#/dashboard');
    await waitForText(root, 'Tokens per minute');
    await audit(root, 'dashboard');
    expect(problems).toEqual([]);
    expect(checked.every((c) => c.controls > 0)).toBe(true);
    await api('POST', `/v1/sessions/${sessionId}/tool-calls/call_wipe/decision`, tokens.boss, { approved: false, reason: 'test over' });
  });
});

