import { spawn } from 'node:child_process';
import { workflowIdFor } from '../../workflows/messages';
import { MCP_OAUTH_COLLECTION, McpOAuthDocument } from '../../activities/mcp/mcp-oauth-store';
import { collectEvents, eventually, sessionOptions, startTestEnv, turnCompleted, uniqueId, type TestEnv } from '../support/test-env';
import { decryptedHistoryText } from '../support/history-text';
import { PROJECT_ROOT, freePort, recordingLogger, tempDir, writeMcpConfig } from '../support/mcp-servers';
import { ProtectedMcpServer, TestAuthorizationServer } from '../support/oauth-authorization-server';
import { lastToolContent, scriptCall } from '../support/scripted-steps';
import type { AgentEvent } from '../../workflows/events';

const dir = tempDir('mcp-oauth');
const logger = recordingLogger();
const authServer = new TestAuthorizationServer({ accessTokenTtlMs: 120_000 });
const mcpServer = new ProtectedMcpServer(authServer);
let env: TestEnv;
let configPath: string;
const sessions: string[] = [];
const events: AgentEvent[] = [];
const commandOutput: string[] = [];

beforeAll(async () => {
  await authServer.start();
  const url = await mcpServer.start();
  const redirectPort = await freePort();
  configPath = writeMcpConfig(dir, {
    secure: { type: 'http', url, timeoutMs: 5_000, oauth: { redirectUrl: `http://127.0.0.1:${redirectPort}/callback`, clientName: 'durable-agent tests' } },
  });
  env = await startTestEnv({ name: 'mcp-oauth', configEnv: { MCP_CONFIG_PATH: configPath }, mcpLogger: logger });
});
afterAll(async () => {
  await env?.close();
  await mcpServer.close();
  await authServer.close();
});

const secure = (worker = env.worker) => worker.mcp!.pool.connection('secure')!;
const needsAuthorizationLines = () => logger.lines.filter((l) => !l.startsWith('debug') && l.includes('needs authorization'));
const storedGrant = async () => {
  const raw = await env.db.collection<{ _id: string }>(MCP_OAUTH_COLLECTION).findOne({ _id: 'secure:shared' });
  return raw ? McpOAuthDocument.parse(raw) : null;
};

/** `npm run mcp:authorize -- secure`, as a person would run it (the same script, without npm's wrapper). */
function runAuthorize(onUrl: (url: string) => void): Promise<number | null> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/mcp-authorize.ts', 'secure', '--timeout-s', '30'], {
    cwd: PROJECT_ROOT,
    env: { ...process.env, MCP_CONFIG_PATH: configPath, MONGODB_URI: env.config.mongodb.uri, MONGODB_DATABASE: env.config.mongodb.database },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let seen = false;
  const take = (chunk: Buffer) => {
    const text = chunk.toString('utf8');
    commandOutput.push(text);
    const match = /^\s+(http\S+\/authorize\S*)$/m.exec(commandOutput.join(''));
    if (match?.[1] && !seen) {
      seen = true;
      onUrl(match[1]);
    }
  };
  child.stdout.on('data', take);
  child.stderr.on('data', take);
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

async function callSecureTool(worker: string): Promise<Record<string, unknown>> {
  const sessionId = uniqueId(`s-${worker}`);
  sessions.push(sessionId);
  scriptCall(env.model, sessionId, 'mcp_secure_query_report', { report: 'support', region: 'americas', quarter: '2025-Q4' });
  const { turnId } = await env.agent.send(sessionOptions(sessionId), { text: 'support numbers please' });
  const seen = await collectEvents(env.agent, sessionId, turnCompleted(turnId));
  events.push(...seen.map((e) => e.event));
  expect(await env.agent.waitForTurn(sessionId, turnId)).toMatchObject({ outcome: 'completed' });
  return JSON.parse(lastToolContent(env.model, sessionId)) as Record<string, unknown>;
}

describe('MCP servers that need OAuth', () => {
  it('a server that needs authorization does not stop the worker: one line names the URL to open and the command to run', async () => {
    expect(secure().status).toBe('reconnecting');
    expect(secure().needsAuthorization).toBe(true);
    expect(secure().lastError).toMatch(/needs authorization: a person must run "npm run mcp:authorize -- secure"/);
    // Reconnect attempts keep the same pending authorization and say nothing new.
    await new Promise((r) => setTimeout(r, 2_000));
    const lines = needsAuthorizationLines();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^warn server "secure": needs authorization: run "npm run mcp:authorize -- secure" and open http:\/\/127\.0\.0\.1:\d+\/authorize\?\S+/);
    expect(authServer.counts.registrations).toBe(1);
    const stored = await storedGrant();
    expect(stored?.clientInformation?.client_id).toMatch(/^client_/);
    expect(stored?.tokens).toBeUndefined();
    expect(stored?.pending?.authorizationUrl).toBe(/open (\S+)/.exec(lines[0]!)?.[1]);
  });

  it('the authorize command completes the flow and stores the grant; the worker connects and a session calls a protected tool', async () => {
    const workerUrl = /open (\S+)/.exec(needsAuthorizationLines()[0]!)![1]!;
    let opened: Promise<Response> | undefined;
    const exit = await runAuthorize((url) => {
      // The command offers the URL the worker logged, and the browser (fetch) follows the redirects to its callback.
      expect(url).toBe(workerUrl);
      opened = fetch(url);
    });
    expect(`exit ${exit}: ${commandOutput.join('')}`).toMatch(/^exit 0:/);
    const page = await opened!;
    expect(page.status).toBe(200);
    expect(await page.text()).toMatch(/Authorized "secure"/);
    expect(commandOutput.join('')).toMatch(/"secure" is authorized \(\d+ tools\)/);
    expect(authServer.counts).toMatchObject({ registrations: 1, authorizations: 1, codeExchanges: 1 });

    const stored = await storedGrant();
    expect(authServer.issued).toContain(stored?.tokens?.access_token);
    expect(authServer.issued).toContain(stored?.tokens?.refresh_token);
    expect(stored?.pending).toBeUndefined();
    expect(stored?.tokensExpireAt).toBeInstanceOf(Date);

    // The worker notices the grant in the store without waiting out its backoff.
    await eventually(() => secure().status === 'ready', 'the worker to connect with the stored grant', 10_000);
    expect(secure().needsAuthorization).toBe(false);
    const result = await callSecureTool('first');
    expect(result.rows).toEqual([{ quarter: '2025-Q4', region: 'americas', value: expect.any(Number) }]);
    // The token the tool call carried is the stored one (a reconnect that raced the grant may have refreshed it once).
    expect(mcpServer.toolCallTokens.at(-1)).toBe((await storedGrant())?.tokens?.access_token);
    expect(authServer.counts.authorizations).toBe(1);
  }, 60_000);

  it('a second worker reuses the stored grant without authorizing again', async () => {
    const before = { ...authServer.counts };
    const second = await env.startWorker();
    expect(secure(second).status).toBe('ready');
    expect(secure(second).needsAuthorization).toBe(false);
    const result = await callSecureTool('second');
    expect(result.rows).toHaveLength(1);
    expect(authServer.counts).toEqual(before);
    expect(needsAuthorizationLines()).toHaveLength(1);
  });

  it('an expired access token is refreshed through the SDK, and the new grant is stored for every worker', async () => {
    const old = (await storedGrant())?.tokens;
    authServer.expireAccessTokens();
    const refreshesBefore = authServer.counts.refreshes;
    const result = await callSecureTool('expired');
    expect(result.rows).toHaveLength(1);
    expect(authServer.counts.refreshes).toBeGreaterThan(refreshesBefore);
    expect(authServer.counts.authorizations).toBe(1);
    const fresh = (await storedGrant())?.tokens;
    expect(fresh?.access_token).not.toBe(old?.access_token);
    expect(fresh?.refresh_token).not.toBe(old?.refresh_token);
    expect(authServer.validate(fresh?.access_token, mcpServer.url)).toBe(true);
    // Both workers still answer: the one holding the rotated-away refresh token re-reads the store.
    expect(await callSecureTool('after-refresh')).toMatchObject({ rows: expect.any(Array) });
    expect(await callSecureTool('after-refresh-2')).toMatchObject({ rows: expect.any(Array) });
  });

  it('a token the server echoes back reaches neither the model nor the history', async () => {
    const sessionId = uniqueId('s-echo');
    sessions.push(sessionId);
    scriptCall(env.model, sessionId, 'mcp_secure_echo_token', {});
    const { turnId } = await env.agent.send(sessionOptions(sessionId), { text: 'which token?' });
    events.push(...(await collectEvents(env.agent, sessionId, turnCompleted(turnId))).map((e) => e.event));
    expect(lastToolContent(env.model, sessionId)).toMatch(/you called with Bearer \*\*\*/);
    expect(JSON.stringify(env.model.requestsFor(sessionId))).not.toMatch(/at_[A-Za-z0-9_-]{20,}/);
  });

  it('no token, refresh token or client secret appears in workflow history, events, model requests, logs or the command output', async () => {
    expect(authServer.issued.length).toBeGreaterThanOrEqual(4);
    const secrets = [...authServer.issued, ...[...authServer.clients.values()].flatMap((c) => (c.client_secret ? [c.client_secret] : []))];
    const texts = [JSON.stringify(events), logger.lines.join('\n'), commandOutput.join(''), JSON.stringify(sessions.map((id) => env.model.requestsFor(id)))];
    for (const sessionId of sessions) {
      texts.push(await decryptedHistoryText(await env.client.workflow.getHandle(workflowIdFor(sessionId)).fetchHistory(), env.config.encryption));
    }
    // The histories are searched decrypted and decoded: the tool result is found there, so tokens would be too.
    expect(texts.join('\n')).toContain('"region":"americas"');
    for (const secret of secrets) for (const text of texts) expect(text).not.toContain(secret);
  });
});
