import { join } from 'node:path';
import { createAgentWorker } from '../../workers/agent-worker';
import type { ChatRequest } from '../../scripted-model';
import { collectEvents, eventually, sessionOptions, startTestEnv, turnCompleted, uniqueId, type TestEnv } from '../support/test-env';
import { readServerEvents, recordingLogger, stdioReportServer, tempDir, writeMcpConfig } from '../support/mcp-servers';
import { lastToolContent, scriptCall } from '../support/scripted-steps';

const dir = tempDir('mcp-stdio');
const eventsPath = join(dir, 'events.jsonl');
const logger = recordingLogger();
let env: TestEnv;

beforeAll(async () => {
  const configPath = writeMcpConfig(dir, {
    report: stdioReportServer(eventsPath, { toolOverrides: { hang: { timeoutMs: 1_500 } } }),
    // Listed but disabled: never spawned.
    disabled: { command: 'definitely-not-a-command', enabled: false },
  });
  env = await startTestEnv({ name: 'mcp-stdio', configEnv: { MCP_CONFIG_PATH: configPath }, mcpLogger: logger });
});
afterAll(async () => {
  await env?.close();
});

const report = () => env.worker.mcp!.pool.connection('report')!;
const serverEvents = (event: string, tool?: string) => readServerEvents(eventsPath).filter((e) => e.event === event && (tool === undefined || e.tool === tool));

describe('MCP tools over stdio, through a session', () => {
  it('offers the server tools beside native ones, with risk from annotations, and runs one', async () => {
    const { catalog } = env.worker.mcp!.toolSource.current();
    const byName = new Map(catalog.tools.map((t) => [t.name, t]));
    expect(byName.get('mcp_report_query_report')).toMatchObject({ source: 'mcp', risk: 'read', maxAttempts: 3 });
    expect(byName.get('mcp_report_delete_report')).toMatchObject({ risk: 'destructive', maxAttempts: 1 });
    expect(byName.get('mcp_report_enable_extra_tool')).toMatchObject({ risk: 'write' });
    expect(byName.get('mcp_report_hang')).toMatchObject({ timeoutMs: 1_500 });
    expect(byName.has('local_calculate')).toBe(true);
    expect([...byName.keys()].some((n) => n.startsWith('mcp_disabled_'))).toBe(false);

    const sessionId = uniqueId('s');
    scriptCall(env.model, sessionId, 'mcp_report_query_report', { report: 'revenue', quarter: '2025-Q1', region: 'emea' }, 'EMEA made 1480 kEUR.');
    const { turnId } = await env.agent.send(sessionOptions(sessionId), { text: 'EMEA revenue in Q1?' });
    expect(await env.agent.waitForTurn(sessionId, turnId)).toMatchObject({ outcome: 'completed', text: 'EMEA made 1480 kEUR.' });
    const offered = ((env.model.requestsFor(sessionId)[0]!.body as ChatRequest).tools ?? []).map((t) => t.function.name);
    expect(offered).toEqual(expect.arrayContaining(['mcp_report_query_report', 'mcp_report_noop', 'local_calculate']));
    expect(JSON.parse(lastToolContent(env.model, sessionId))).toEqual({ report: 'revenue', unit: 'kEUR', rows: [{ quarter: '2025-Q1', region: 'emea', value: 1480 }] });
    // One process serves every call: no spawn per call.
    expect(report().connectCount).toBe(1);
  });

  it('holds a destructive MCP tool for confirmation and runs it only after approval', async () => {
    const sessionId = uniqueId('s');
    scriptCall(env.model, sessionId, 'mcp_report_delete_report', { report: 'headcount' });
    const { turnId } = await env.agent.send(sessionOptions(sessionId), { text: 'delete the headcount report' });
    const view = await eventually(async () => {
      const v = await env.agent.getSession(sessionId);
      return v.pendingConfirmations.length > 0 ? v : null;
    }, 'a pending confirmation');
    expect(view.pendingConfirmations[0]).toMatchObject({ toolName: 'mcp_report_delete_report', risk: 'destructive' });
    expect(serverEvents('call', 'delete_report')).toEqual([]);
    await env.agent.approve(sessionId, view.pendingConfirmations[0]!.toolCallId);
    await env.agent.waitForTurn(sessionId, turnId);
    expect(serverEvents('call', 'delete_report')).toHaveLength(1);
    expect(lastToolContent(env.model, sessionId)).toBe('Report "headcount" deleted.');
  });

  it('returns an isError result to the model as ToolFailed with the server text and a next step', async () => {
    const sessionId = uniqueId('s');
    scriptCall(env.model, sessionId, 'mcp_report_fail', { message: 'the quarter is not closed yet' });
    const { turnId } = await env.agent.send(sessionOptions(sessionId), { text: 'close the books' });
    const events = await collectEvents(env.agent, sessionId, turnCompleted(turnId));
    const error = JSON.parse(lastToolContent(env.model, sessionId)).error;
    expect(error.type).toBe('ToolFailed');
    expect(error.message).toMatch(/mcp_report_fail: the tool reported an error: the quarter is not closed yet\. Next step: /);
    expect(events.find((e) => e.event.type === 'tool_call_result')?.event).toMatchObject({ ok: false, errorType: 'ToolFailed' });
  });

  it('turns progress notifications into tool_call_progress events', async () => {
    const sessionId = uniqueId('s');
    scriptCall(env.model, sessionId, 'mcp_report_slow', { ms: 900, steps: 3 });
    const { turnId } = await env.agent.send(sessionOptions(sessionId), { text: 'work slowly' });
    const events = await collectEvents(env.agent, sessionId, turnCompleted(turnId));
    const progress = events.map((e) => e.event).filter((e) => e.type === 'tool_call_progress');
    expect(progress.length).toBeGreaterThanOrEqual(2);
    expect(progress.at(-1)).toMatchObject({ turnId, toolCallId: `call_mcp_report_slow_${sessionId}`, toolName: 'mcp_report_slow', total: 3 });
    const offsets = events.map((e) => e.event.type);
    expect(offsets.indexOf('tool_call_progress')).toBeGreaterThan(offsets.indexOf('tool_call_start'));
    expect(offsets.lastIndexOf('tool_call_progress')).toBeLessThan(offsets.indexOf('tool_call_result'));
    expect(lastToolContent(env.model, sessionId)).toBe('done after 900 ms');
  });

  it('times out a hanging tool with a helpful message and tells the server to stop', async () => {
    const sessionId = uniqueId('s');
    scriptCall(env.model, sessionId, 'mcp_report_hang', {});
    const { turnId } = await env.agent.send(sessionOptions(sessionId), { text: 'hang' });
    const started = Date.now();
    await env.agent.waitForTurn(sessionId, turnId);
    expect(Date.now() - started).toBeLessThan(8_000);
    const error = JSON.parse(lastToolContent(env.model, sessionId)).error;
    expect(error.type).toBe('ToolTimeout');
    expect(error.message).toMatch(/MCP server "report" did not answer within 1\.5 s, so the request was cancelled/);
    expect(error.next_step).toMatch(/slow or unavailable/);
    await eventually(() => serverEvents('cancelled', 'hang').length === 1, 'the server to see notifications/cancelled');
  });

  it('cancels an MCP call on interrupt, and the server receives notifications/cancelled', async () => {
    const sessionId = uniqueId('s');
    env.model.script([{ respond: { kind: 'tool_calls', calls: [{ name: 'mcp_report_slow', arguments: { ms: 20_000, steps: 2 } }] } }], { lane: sessionId });
    const before = serverEvents('call', 'slow').length;
    const { turnId } = await env.agent.send(sessionOptions(sessionId), { text: 'take your time' });
    await eventually(() => serverEvents('call', 'slow').length > before, 'the server to start the call');
    const interruptedAt = Date.now();
    await env.agent.interrupt(sessionId, 'stop');
    expect(await env.agent.waitForTurn(sessionId, turnId)).toMatchObject({ outcome: 'interrupted' });
    const cancelled = await eventually(() => serverEvents('cancelled', 'slow')[0], 'the server to see notifications/cancelled');
    expect(cancelled.at as number).toBeLessThan(interruptedAt + 5_000);
    expect(cancelled.step).toBe(1);
  });

  it('shows a tool the server adds at runtime after notifications/tools/list_changed', async () => {
    const versionBefore = env.worker.mcp!.toolSource.current().catalog.version;
    const sessionId = uniqueId('s');
    scriptCall(env.model, sessionId, 'mcp_report_enable_extra_tool', {}, 'Enabled.');
    const first = await env.agent.send(sessionOptions(sessionId), { text: 'turn on summaries' });
    await env.agent.waitForTurn(sessionId, first.turnId);
    await eventually(() => report().tools.some((t) => t.name === 'summarize_quarter'), 'the new tool to be listed');
    expect(env.worker.mcp!.toolSource.current().catalog.version).not.toBe(versionBefore);

    env.model.script(
      [
        { match: { toolsOffered: ['mcp_report_summarize_quarter'] }, respond: { kind: 'tool_calls', calls: [{ name: 'mcp_report_summarize_quarter', arguments: { quarter: '2025-Q2' } }] } },
        { match: { hasToolResults: true }, respond: { kind: 'text', text: 'Summary ready.' } },
      ],
      { lane: sessionId },
    );
    const second = await env.agent.sendTo(sessionId, { text: 'summarize Q2' });
    expect(await env.agent.waitForTurn(sessionId, second.turnId)).toMatchObject({ outcome: 'completed', text: 'Summary ready.' });
    expect(lastToolContent(env.model, sessionId)).toMatch(/^2025-Q2\nrevenue: \d+ kEUR\nsupport: \d+ tickets closed\nheadcount: \d+ people$/);
    env.model.assertDone(sessionId);
  });

  it('restarts a server killed mid-session and its tools work again', async () => {
    const sessionId = uniqueId('s');
    scriptCall(env.model, sessionId, 'mcp_report_noop', {});
    const first = await env.agent.send(sessionOptions(sessionId), { text: 'ping' });
    await env.agent.waitForTurn(sessionId, first.turnId);
    const oldPid = report().pid!;
    const connects = report().connectCount;
    process.kill(oldPid, 'SIGKILL');
    await eventually(() => report().status !== 'ready', 'the connection to notice the exit');
    expect(logger.lines.some((l) => /server "report": disconnected: the server process exited/.test(l))).toBe(true);

    // Sent while the server is still coming back: the call waits for the reconnect instead of failing.
    scriptCall(env.model, sessionId, 'mcp_report_query_report', { report: 'support', quarter: '2025-Q3', region: 'apac' });
    const second = await env.agent.sendTo(sessionId, { text: 'APAC support in Q3?' });
    expect(await env.agent.waitForTurn(sessionId, second.turnId)).toMatchObject({ outcome: 'completed' });
    expect(JSON.parse(lastToolContent(env.model, sessionId)).rows).toHaveLength(1);
    expect(report().status).toBe('ready');
    expect(report().pid).not.toBe(oldPid);
    expect(report().connectCount).toBe(connects + 1);
    // The tool added at runtime by the previous test is gone with the old process.
    expect(report().tools.some((t) => t.name === 'summarize_quarter')).toBe(false);
  });
});

describe('MCP configuration errors', () => {
  it('refuses to start a worker whose MCP tool names collide, naming both tools', async () => {
    const configPath = writeMcpConfig(
      dir,
      { 'report.1': stdioReportServer(join(dir, 'c1.jsonl')), report_1: stdioReportServer(join(dir, 'c2.jsonl')) },
      'collision.json',
    );
    const config = { ...env.config, mcp: { ...env.config.mcp, configPath } };
    const err = await createAgentWorker(config, { workflowBundlePath: process.env.WORKFLOW_BUNDLE_PATH, mcpLogger: recordingLogger() }).catch((e: unknown) => e);
    expect(err).toMatchObject({ type: 'ConfigInvalid' });
    expect((err as Error).message).toMatch(
      /tool name collision: "mcp_report_1_noop" is defined by both MCP server "report\.1" \(tool "noop"\) and MCP server "report_1" \(tool "noop"\)/,
    );
  });

  it('names the server and the field of an invalid entry', async () => {
    const configPath = writeMcpConfig(dir, { broken: { type: 'http', url: 'not a url', header: {} } }, 'invalid.json');
    const config = { ...env.config, mcp: { ...env.config.mcp, configPath } };
    const err = await createAgentWorker(config, { workflowBundlePath: process.env.WORKFLOW_BUNDLE_PATH }).catch((e: unknown) => e);
    expect((err as Error).message).toMatch(/server "broken", field "url": must be an http:\/\/ or https:\/\/ URL/);
    expect((err as Error).message).toMatch(/server "broken", field "header": is not a known field/);
  });
});
