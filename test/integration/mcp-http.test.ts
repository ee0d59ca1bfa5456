import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { workflowIdFor } from '../../workflows/messages';
import type { ChatRequest } from '../../scripted-model';
import { collectEvents, eventually, sessionOptions, startTestEnv, turnCompleted, uniqueId, type TestEnv } from '../support/test-env';
import { decryptedHistoryText } from '../support/history-text';
import { HttpReportServer, freePort, readServerEvents, recordingLogger, tempDir, writeMcpConfig } from '../support/mcp-servers';
import { lastToolContent, scriptCall } from '../support/scripted-steps';

const dir = tempDir('mcp-http');
const eventsPath = join(dir, 'events.jsonl');
// The worker reads the token from its environment through ${MCP_HTTP_TEST_TOKEN}; the file never holds it.
const token = `tok-${randomUUID()}`;
process.env.MCP_HTTP_TEST_TOKEN = token;
const logger = recordingLogger();
let server: HttpReportServer;
let env: TestEnv;

beforeAll(async () => {
  server = new HttpReportServer({ port: await freePort(), eventsPath, tokenEnv: 'SERVER_TOKEN', env: { SERVER_TOKEN: token } });
  const url = await server.start();
  const configPath = writeMcpConfig(dir, {
    reports: { type: 'http', url, headers: { Authorization: 'Bearer ${MCP_HTTP_TEST_TOKEN}' }, timeoutMs: 4_000 },
  });
  env = await startTestEnv({ name: 'mcp-http', configEnv: { MCP_CONFIG_PATH: configPath }, mcpLogger: logger });
});
afterAll(async () => {
  await env?.close();
  await server?.kill();
  delete process.env.MCP_HTTP_TEST_TOKEN;
});

const reports = () => env.worker.mcp!.pool.connection('reports')!;
const serverEvents = (event: string, tool?: string) => readServerEvents(eventsPath).filter((e) => e.event === event && (tool === undefined || e.tool === tool));

describe('MCP tools over streamable HTTP, through a session', () => {
  it('sends the bearer token from ${VAR} and keeps it out of history, events and logs', async () => {
    const sessionId = uniqueId('s');
    env.model.script(
      [
        { respond: { kind: 'tool_calls', calls: [{ name: 'mcp_reports_query_report', arguments: { report: 'support', region: 'americas', quarter: '2025-Q4' } }] } },
        { respond: { kind: 'tool_calls', calls: [{ name: 'mcp_reports_slow', arguments: { ms: 400, steps: 2 } }] } },
        { respond: { kind: 'tool_calls', calls: [{ name: 'mcp_reports_fail', arguments: { message: 'nope' } }] } },
        { respond: { kind: 'text', text: 'Done.' } },
      ],
      { lane: sessionId },
    );
    const { turnId } = await env.agent.send(sessionOptions(sessionId), { text: 'support numbers please' });
    const events = await collectEvents(env.agent, sessionId, turnCompleted(turnId));
    const requests = env.model.requestsFor(sessionId);
    const firstResult = (requests[1]!.body as ChatRequest).messages.filter((m) => m.role === 'tool')[0];
    expect(JSON.parse(String(firstResult?.content)).rows).toEqual([{ quarter: '2025-Q4', region: 'americas', value: expect.any(Number) }]);
    expect(events.some((e) => e.event.type === 'tool_call_progress')).toBe(true);

    const history = await env.client.workflow.getHandle(workflowIdFor(sessionId)).fetchHistory();
    const readable = await decryptedHistoryText(history, env.config.encryption);
    // The search decrypts and reaches into payloads: the tool result and the streamed progress event are found...
    expect(readable).toContain('"region":"americas"');
    expect(readable).toContain('"type":"tool_call_progress"');
    // ...and the token is not.
    expect(readable).not.toContain(token);
    expect(JSON.stringify(events)).not.toContain(token);
    expect(logger.lines.join('\n')).not.toContain(token);
    expect(reports().connectCount).toBe(1);
  });

  it('re-initializes a session the server no longer knows (404) and retries the call once', async () => {
    const initsBefore = serverEvents('initialize').length;
    server.signal('SIGUSR1');
    await eventually(() => serverEvents('sessions_forgotten').length > 0, 'the server to forget its sessions');
    const sessionId = uniqueId('s');
    scriptCall(env.model, sessionId, 'mcp_reports_query_report', { report: 'revenue', quarter: '2025-Q2', region: 'apac' });
    const { turnId } = await env.agent.send(sessionOptions(sessionId), { text: 'APAC revenue in Q2' });
    expect(await env.agent.waitForTurn(sessionId, turnId)).toMatchObject({ outcome: 'completed' });
    expect(JSON.parse(lastToolContent(env.model, sessionId)).rows).toHaveLength(1);
    expect(serverEvents('initialize').length).toBe(initsBefore + 1);
    expect(logger.lines.some((l) => /no longer knows our HTTP session \(404\); initializing a new session/.test(l))).toBe(true);
  });

  it('cancels an HTTP MCP call on interrupt, and the server receives notifications/cancelled', async () => {
    const sessionId = uniqueId('s');
    env.model.script([{ respond: { kind: 'tool_calls', calls: [{ name: 'mcp_reports_hang', arguments: {} }] } }], { lane: sessionId });
    const { turnId } = await env.agent.send(sessionOptions(sessionId), { text: 'wait for it' });
    await eventually(() => serverEvents('call', 'hang').length === 1, 'the server to start the call');
    await env.agent.interrupt(sessionId, 'stop');
    expect(await env.agent.waitForTurn(sessionId, turnId)).toMatchObject({ outcome: 'interrupted' });
    await eventually(() => serverEvents('cancelled', 'hang').length === 1, 'the server to see notifications/cancelled', 5_000);
  });

  it('fails the tools of a server that is down with a clear message, and reconnects when it is back', async () => {
    await server.kill();
    await eventually(() => reports().status === 'reconnecting', 'the connection to notice the server is gone');
    const sessionId = uniqueId('s');
    scriptCall(env.model, sessionId, 'mcp_reports_noop', {}, 'It is down.');
    const down = await env.agent.send(sessionOptions(sessionId), { text: 'ping' });
    expect(await env.agent.waitForTurn(sessionId, down.turnId)).toMatchObject({ outcome: 'completed', text: 'It is down.' });
    const error = JSON.parse(lastToolContent(env.model, sessionId)).error;
    expect(error.type).toBe('ToolFailed');
    expect(error.message).toMatch(/MCP server "reports" is unavailable: .*reconnecting in the background/);
    expect(error.message).toMatch(/Next step: tell the user that the "reports" service is unreachable/);
    expect(error.message).not.toContain(token);

    await server.start();
    await eventually(() => reports().status === 'ready', 'the connection to come back', 30_000);
    scriptCall(env.model, sessionId, 'mcp_reports_noop', {}, 'Back.');
    const back = await env.agent.sendTo(sessionId, { text: 'ping again' });
    expect(await env.agent.waitForTurn(sessionId, back.turnId)).toMatchObject({ outcome: 'completed', text: 'Back.' });
    expect(lastToolContent(env.model, sessionId)).toBe('ok');
  }, 60_000);
});
