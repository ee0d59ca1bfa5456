import { join } from 'node:path';
import { answerInputSignal } from '../../workflows/messages';
import { mintToken, TokenBook } from '../../api/auth';
import { createApi, listen } from '../../api/server';
import { workflowIdFor } from '../../workflows/messages';
import type { AgentEvent } from '../../workflows/events';
import { SessionValidationError } from '../../client/errors';
import { collectEvents, eventually, sessionOptions, startTestEnv, turnCompleted, uniqueId, type TestEnv } from '../support/test-env';
import { readServerEvents, stdioReportServer, tempDir, writeMcpConfig } from '../support/mcp-servers';
import { lastToolContent, scriptCall } from '../support/scripted-steps';

/*
 * A real MCP server (our report server over stdio) asks the user for input in
 * the middle of a tool call (`elicitation/create`); the session holds the
 * question like a confirmation and any client answers it.
 */

const dir = tempDir('mcp-elicit');
const eventsPath = join(dir, 'events.jsonl');
let env: TestEnv;

beforeAll(async () => {
  const configPath = writeMcpConfig(dir, { report: stdioReportServer(eventsPath, { toolOverrides: { confirm_export: { timeoutMs: 60_000 } } }) });
  env = await startTestEnv({ name: 'mcp-elicit', configEnv: { MCP_CONFIG_PATH: configPath } });
});
afterAll(async () => {
  await env?.close();
});

const answers = () => readServerEvents(eventsPath).filter((e) => e.event === 'elicit_answered');

async function startExport(sessionId: string, extra: Parameters<typeof sessionOptions>[1] = {}) {
  scriptCall(env.model, sessionId, 'mcp_report_confirm_export', { report: 'revenue' }, 'Handled.');
  const { turnId } = await env.agent.send(sessionOptions(sessionId, extra), { text: 'export the revenue report' });
  const events = await collectEvents(env.agent, sessionId, (e) => e.type === 'input_required');
  const required = events.at(-1)!.event as Extract<AgentEvent, { type: 'input_required' }>;
  return { turnId, input: required.input };
}

describe('MCP elicitation as a durable wait', () => {
  it('publishes input_required with the server schema, shows it in getSession, and resumes the call with the accepted answer', async () => {
    const sessionId = uniqueId('elicit');
    const before = answers().length;
    const { turnId, input } = await startExport(sessionId);
    expect(input).toMatchObject({
      inputId: `call_mcp_report_confirm_export_${sessionId}:1`,
      toolName: 'mcp_report_confirm_export',
      server: 'report',
      turnId,
      requestedSchema: { type: 'object', required: ['format'] },
    });
    expect(input.message).toMatch(/which format/);
    const view = await env.agent.getSession(sessionId);
    expect(view.activity).toBe('awaiting_input');
    expect(view.pendingInputs).toEqual([input]);

    await env.agent.answerInput(sessionId, { inputId: input.inputId, action: 'accept', content: { format: 'json', recipient: 'ana@example.com' } });
    const result = await env.agent.waitForTurn(sessionId, turnId);
    expect(result.outcome).toBe('completed');
    expect(lastToolContent(env.model, sessionId)).toBe('Exported revenue as json and sent to ana@example.com.');
    expect(answers().slice(before)).toEqual([expect.objectContaining({ action: 'accept', content: { format: 'json', recipient: 'ana@example.com' } })]);
    const events = await collectEvents(env.agent, sessionId, turnCompleted(turnId));
    expect(events.filter((e) => e.event.type === 'input_answered').map((e) => e.event)).toEqual([
      expect.objectContaining({ inputId: input.inputId, action: 'accept', answeredBy: 'user', turnId }),
    ]);
    expect((await env.agent.getSession(sessionId)).pendingInputs).toEqual([]);
  }, 60_000);

  it('is answered over HTTP too (POST /v1/sessions/{id}/inputs/{inputId}): a bad answer is 422 naming the field, an unknown input 404, a stranger 403', async () => {
    const ana = mintToken({ tenant: 'acme', user: 'ana' });
    const eve = mintToken({ tenant: 'evil', user: 'eve' });
    const api = createApi({ agent: env.agent, tokens: new TokenBook([ana.entry, eve.entry]), limits: { requestsPerMinute: 100_000 } });
    const server = await listen(api.app, 0);
    try {
      const sessionId = uniqueId('elicit-http');
      const { turnId, input } = await startExport(sessionId);
      const answer = (token: string, inputId: string, body: unknown) =>
        fetch(`${server.url}/v1/sessions/${sessionId}/inputs/${encodeURIComponent(inputId)}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      const bad = await answer(ana.token, input.inputId, { action: 'accept', content: { format: 'pdf' } });
      expect({ status: bad.status, body: await bad.json() }).toMatchObject({ status: 422, body: { failureType: 'SessionInputInvalid', detail: expect.stringMatching(/format/) } });
      const unknown = await answer(ana.token, 'call_x:1', { action: 'decline' });
      expect({ status: unknown.status, body: await unknown.json() }).toMatchObject({ status: 404, body: { failureType: 'InputUnknown' } });
      const stranger = await answer(eve.token, input.inputId, { action: 'decline' });
      expect(stranger.status).toBe(403);
      await stranger.body?.cancel();
      const extra = await answer(ana.token, input.inputId, { action: 'decline', reason: 'no' });
      expect(extra.status).toBe(422);
      await extra.body?.cancel();
      expect((await env.agent.getSession(sessionId)).pendingInputs).toHaveLength(1);
      const ok = await answer(ana.token, input.inputId, { action: 'accept', content: { format: 'csv', recipient: 'ana@example.com' } });
      expect(ok.status).toBe(204);
      expect(await env.agent.waitForTurn(sessionId, turnId)).toMatchObject({ outcome: 'completed' });
      expect(lastToolContent(env.model, sessionId)).toBe('Exported revenue as csv and sent to ana@example.com.');
    } finally {
      api.hub.close();
      await server.close();
    }
  }, 60_000);

  it('refuses an answer that does not fit the schema, or an unknown input, and writes nothing', async () => {
    const sessionId = uniqueId('elicit');
    const { turnId, input } = await startExport(sessionId);
    await expect(env.agent.answerInput(sessionId, { inputId: input.inputId, action: 'accept', content: { format: 'pdf' } })).rejects.toThrow(/format/);
    await expect(env.agent.answerInput(sessionId, { inputId: input.inputId, action: 'accept', content: { format: 'csv', recipient: 'not an address' } })).rejects.toThrow(
      SessionValidationError,
    );
    await expect(env.agent.answerInput(sessionId, { inputId: input.inputId, action: 'accept' })).rejects.toThrow(/content is required/);
    await expect(env.agent.answerInput(sessionId, { inputId: 'call_x:1', action: 'decline' })).rejects.toThrow(/No input call_x:1 is waiting/);
    expect((await env.agent.getSession(sessionId)).pendingInputs).toHaveLength(1);
    // A decline by signal (any Temporal client can send one) ends the wait; the server hears "decline".
    await env.client.workflow.getHandle(workflowIdFor(sessionId)).signal(answerInputSignal, { inputId: input.inputId, action: 'decline', principal: { tenant: 'acme', user: 'ana' } });
    await env.agent.waitForTurn(sessionId, turnId);
    expect(lastToolContent(env.model, sessionId)).toBe('Export of revenue declined by the user; nothing was exported.');
  }, 60_000);

  it('cancels the question back to the server when nobody answers in time', async () => {
    const sessionId = uniqueId('elicit');
    const { turnId, input } = await startExport(sessionId, { limits: { confirmationTimeoutMs: 1_500 } });
    await env.agent.waitForTurn(sessionId, turnId);
    expect(lastToolContent(env.model, sessionId)).toBe('Export of revenue cancelled by the user; nothing was exported.');
    const events = await collectEvents(env.agent, sessionId, turnCompleted(turnId));
    expect(events.find((e) => e.event.type === 'input_answered')?.event).toMatchObject({ inputId: input.inputId, action: 'cancel', answeredBy: 'timeout' });
    await expect(env.agent.answerInput(sessionId, { inputId: input.inputId, action: 'decline' })).rejects.toThrow(/No input/);
  }, 60_000);

  it('an interrupt during the wait cancels the call and closes the question', async () => {
    const sessionId = uniqueId('elicit');
    const { turnId, input } = await startExport(sessionId);
    await env.agent.interrupt(sessionId, 'changed my mind');
    const result = await env.agent.waitForTurn(sessionId, turnId);
    expect(result.outcome).toBe('interrupted');
    const events = await collectEvents(env.agent, sessionId, (e) => e.type === 'input_answered');
    expect(events.at(-1)!.event).toMatchObject({ inputId: input.inputId, action: 'cancel', answeredBy: 'call_ended' });
    await eventually(async () => (await env.agent.getSession(sessionId)).pendingInputs.length === 0, 'the question to close');
  }, 60_000);
});
