import { join } from 'node:path';
import { TOOL_RESULTS_COLLECTION } from '../../activities/tools/tool-result-store';
import { AUDIT_LOG_LINES } from '../../examples/mcp-report-server/report-server';
import { sessionOptions, startTestEnv, uniqueId, type TestEnv } from '../support/test-env';
import { readServerEvents, stdioReportServer, tempDir, writeMcpConfig } from '../support/mcp-servers';
import { lastToolContent, scriptCall } from '../support/scripted-steps';

/* Resources as tools the model calls, and prompts the client expands, over a real stdio server. */

const dir = tempDir('mcp-res');
const eventsPath = join(dir, 'events.jsonl');
let env: TestEnv;

beforeAll(async () => {
  const configPath = writeMcpConfig(dir, { report: stdioReportServer(eventsPath) });
  env = await startTestEnv({ name: 'mcp-res', configEnv: { MCP_CONFIG_PATH: configPath } });
});
afterAll(async () => {
  await env?.close();
});

describe('MCP resources through tools', () => {
  it('offers read and list tools for a server that declares resources, naming known resources in the pinned description', () => {
    const { catalog } = env.worker.mcp!.toolSource.current();
    const read = catalog.tools.find((t) => t.name === 'mcp_report_read_resource');
    expect(read).toMatchObject({ risk: 'read', source: 'mcp', parameters: { required: ['uri'] } });
    expect(read!.description).toContain('report://revenue');
    expect(read!.description).toContain('report://audit-log');
    expect(catalog.tools.find((t) => t.name === 'mcp_report_list_resources')).toMatchObject({ risk: 'read' });
  });

  it('the model reads a resource by URI', async () => {
    const sessionId = uniqueId('res');
    scriptCall(env.model, sessionId, 'mcp_report_read_resource', { uri: 'report://revenue' });
    await env.agent.ask(sessionOptions(sessionId), { text: 'read the revenue report' });
    const content = JSON.parse(lastToolContent(env.model, sessionId)) as { report: string; rows: unknown[] };
    expect(content.report).toBe('revenue');
    expect(content.rows.length).toBeGreaterThan(0);
    expect(readServerEvents(eventsPath).some((e) => e.event === 'read_resource' && e.uri === 'report://revenue')).toBe(true);
  }, 30_000);

  it('a large resource is cut for the model and stored whole by reference', async () => {
    const sessionId = uniqueId('res');
    scriptCall(env.model, sessionId, 'mcp_report_read_resource', { uri: 'report://audit-log' });
    const { turnId } = await env.agent.ask(sessionOptions(sessionId), { text: 'read the audit log' });
    const content = lastToolContent(env.model, sessionId);
    const key = `${sessionId}:${turnId}:1:call_mcp_report_read_resource_${sessionId}`;
    expect(content.length).toBeLessThanOrEqual(env.config.limits.maxToolResultChars);
    expect(content).toContain(`the full result is stored as tool_result ${key}`);
    const stored = await env.db.collection<{ _id: string; content: string }>(TOOL_RESULTS_COLLECTION).findOne({ _id: key });
    expect(stored?.content.split('\n')).toHaveLength(AUDIT_LOG_LINES);
  }, 30_000);

  it('an unknown URI reaches the model as a tool error with a next step', async () => {
    const sessionId = uniqueId('res');
    scriptCall(env.model, sessionId, 'mcp_report_read_resource', { uri: 'report://nope' });
    await env.agent.ask(sessionOptions(sessionId), { text: 'read a missing report' });
    expect(lastToolContent(env.model, sessionId)).toMatch(/report:\/\/nope/);
  }, 30_000);
});

describe('MCP prompts for the client', () => {
  it('lists the servers\' prompts with their arguments', async () => {
    const { prompts, unavailable } = await env.agent.listPrompts();
    expect(unavailable).toEqual([]);
    expect(prompts).toContainEqual(
      expect.objectContaining({
        server: 'report',
        name: 'quarter_review',
        arguments: expect.arrayContaining([expect.objectContaining({ name: 'quarter', required: true })]),
      }),
    );
  }, 30_000);

  it('expands one into the text of a user message, which a session then answers', async () => {
    const expanded = await env.agent.expandPrompt('report', 'quarter_review', { quarter: '2025-Q2', focus: 'EMEA' });
    expect(expanded.text).toBe('Review 2025-Q2: compare revenue, tickets closed and headcount per region, focusing on EMEA, and name the biggest change.');
    const sessionId = uniqueId('prompt');
    env.model.script([{ respond: { kind: 'text', text: 'Reviewed.' } }], { lane: sessionId });
    const { turn } = await env.agent.ask(sessionOptions(sessionId), { text: expanded.text });
    expect(turn.text).toBe('Reviewed.');
    expect((await env.agent.getSession(sessionId)).window[0]!.messages[0]).toEqual({ role: 'user', content: expanded.text });
  }, 30_000);

  it('refuses an unknown server, or arguments the prompt does not take', async () => {
    await expect(env.agent.expandPrompt('nope', 'quarter_review')).rejects.toThrow(/workflow execution failed/i);
    await expect(env.agent.expandPrompt('report', 'quarter_review', { quarter: '1999-Q1' })).rejects.toThrow(/workflow execution failed/i);
  }, 30_000);
});
