import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { answerInputSignal, workflowIdFor } from '../../workflows/messages';
import type { AgentEvent } from '../../workflows/events';
import { startCrashWorker } from '../support/crash-worker-process';
import { collectEvents, eventually, sessionOptions, startTestEnv, turnCompleted, uniqueId, type TestEnv } from '../support/test-env';
import { readServerEvents, stdioReportServer, tempDir, writeMcpConfig } from '../support/mcp-servers';
import { lastToolContent, scriptCall } from '../support/scripted-steps';

/*
 * Elicitation survives a worker crash: the worker (with its stdio MCP server)
 * is SIGKILLed while the server waits for the user's answer. The session
 * holds the question; the retried tool activity on a new worker calls the
 * tool again, the server asks again under the same input id, and finds the
 * answer given meanwhile, or the question still open. Nobody is asked twice.
 */

const dir = tempDir('mcp-elicit-crash');
const eventsPath = join(dir, 'events.jsonl');
const configPath = writeMcpConfig(dir, { report: stdioReportServer(eventsPath, { toolOverrides: { confirm_export: { timeoutMs: 60_000 } } }) });
let env: TestEnv;
const children: ChildProcess[] = [];

beforeAll(async () => {
  env = await startTestEnv({ name: 'elicit-crash', startWorker: false, configEnv: { MCP_CONFIG_PATH: configPath } });
});
afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await env?.close();
});

function startChildWorker(): Promise<ChildProcess> {
  return startCrashWorker(env, { MCP_CONFIG_PATH: configPath }, children);
}

async function kill(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

const serverEvents = (event: string) => readServerEvents(eventsPath).filter((e) => e.event === event && e.tool === 'confirm_export');

/** Starts a turn that calls confirm_export on a child worker and waits until the session holds the question. */
async function askOnChildWorker(sessionId: string) {
  scriptCall(env.model, sessionId, 'mcp_report_confirm_export', { report: 'revenue' }, 'Handled.');
  const child = await startChildWorker();
  const { turnId } = await env.agent.send(sessionOptions(sessionId), { text: 'export the revenue report' });
  const events = await collectEvents(env.agent, sessionId, (e) => e.type === 'input_required', { timeoutMs: 60_000 });
  const input = (events.at(-1)!.event as Extract<AgentEvent, { type: 'input_required' }>).input;
  return { child, turnId, input };
}

describe('a worker SIGKILLed while an MCP server waits for the user', () => {
  it('an answer sent while no worker runs reaches the server through the retried call, and the user is asked once', async () => {
    const sessionId = uniqueId('crash');
    const askedBefore = readServerEvents(eventsPath).filter((e) => e.event === 'elicit_asked').length;
    const { child, turnId, input } = await askOnChildWorker(sessionId);
    await kill(child);

    // No worker is running: the answer waits in history as a signal.
    await env.client.workflow.getHandle(workflowIdFor(sessionId)).signal(answerInputSignal, { inputId: input.inputId, action: 'accept', content: { format: 'csv' }, principal: { tenant: 'acme', user: 'ana' } });
    const worker = await env.startWorker();
    const result = await env.agent.waitForTurn(sessionId, turnId);
    expect(result.outcome).toBe('completed');
    expect(lastToolContent(env.model, sessionId)).toBe('Exported revenue as csv.');

    const events = await collectEvents(env.agent, sessionId, turnCompleted(turnId));
    expect(events.filter((e) => e.event.type === 'input_required')).toHaveLength(1);
    expect(events.filter((e) => e.event.type === 'input_answered').map((e) => e.event)).toEqual([
      expect.objectContaining({ inputId: input.inputId, action: 'accept', answeredBy: 'user' }),
    ]);
    // The server asked in the killed process and again in the new one; only the second one got (and used) the answer.
    const asked = serverEvents('elicit_asked').slice(askedBefore);
    expect(asked.length).toBe(2);
    expect(new Set(asked.map((e) => e.pid)).size).toBe(2);
    const answered = serverEvents('elicit_answered').filter((e) => e.pid === asked[1]!.pid);
    expect(answered.at(-1)).toMatchObject({ action: 'accept', content: { format: 'csv' } });
    expect(serverEvents('elicit_answered').filter((e) => e.pid === asked[0]!.pid)).toEqual([]);
    const view = await env.agent.getSession(sessionId);
    expect(view.counters.inputsRequested).toBe(1);
    expect(view.pendingInputs).toEqual([]);
    // The next test runs its session on a child worker alone.
    await worker.shutdown();
  }, 120_000);

  it('a question still open after the crash stays open on the new worker, without a second input_required, and its answer resumes the call', async () => {
    const sessionId = uniqueId('crash');
    const { child, turnId, input } = await askOnChildWorker(sessionId);
    const asked = () => serverEvents('elicit_asked').length;
    const before = asked();
    await kill(child);
    await env.startWorker();
    const deadline = Date.now() + 30_000;
    while (asked() === before && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    expect(asked()).toBe(before + 1);

    // Until the server gives up on the dead worker's sticky queue (2 s for the crash workers), the session does not answer queries.
    const view = await eventually(() => env.agent.getSession(sessionId), 'the session to answer on the new worker', 40_000);
    expect(view.pendingInputs).toEqual([input]);
    await env.agent.answerInput(sessionId, { inputId: input.inputId, action: 'accept', content: { format: 'json' } });
    const result = await env.agent.waitForTurn(sessionId, turnId);
    expect(result.outcome).toBe('completed');
    expect(lastToolContent(env.model, sessionId)).toBe('Exported revenue as json.');
    const events = await collectEvents(env.agent, sessionId, turnCompleted(turnId));
    expect(events.filter((e) => e.event.type === 'input_required')).toHaveLength(1);
    expect((await env.agent.getSession(sessionId)).counters.inputsRequested).toBe(1);
  }, 120_000);
});
