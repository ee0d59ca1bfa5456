import { trace } from '@opentelemetry/api';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { startTracing, type Tracing } from '../../workers/tracing';
import { probeTools, type ProbeLog } from '../support/probe-tools';
import { sessionOptions, startTestEnv, uniqueId, type TestEnv } from '../support/test-env';

/*
 * One trace across the client, the session workflow and its activities, down
 * to the model call as a GenAI span, captured with an in-memory exporter.
 */

const exporter = new InMemorySpanExporter();
const log: ProbeLog = { runs: [] };
let tracing: Tracing;
let env: TestEnv;

beforeAll(async () => {
  tracing = startTracing({ serviceName: 'durable-agent-test', exporter });
  env = await startTestEnv({ name: 'tracing', extraTools: probeTools(log), tracing });
}, 120_000);

afterAll(async () => {
  await env?.close();
  await tracing?.shutdown();
});

const parentOf = (span: ReadableSpan, all: ReadableSpan[]) => all.find((s) => s.spanContext().spanId === span.parentSpanId);
function chain(span: ReadableSpan, all: ReadableSpan[]): string[] {
  const names: string[] = [];
  for (let s: ReadableSpan | undefined = span; s; s = parentOf(s, all)) names.push(s.name);
  return names;
}

it('links the client\'s send, the workflow, its activities and the model call into one trace, with GenAI attributes', async () => {
  const sessionId = uniqueId('traced');
  env.model.script(
    [
      { respond: { kind: 'tool_calls', calls: [{ id: 'c1', name: 'local_note', arguments: { text: 'milk' } }] } },
      { match: { hasToolResults: true }, respond: { kind: 'text', text: 'Noted.' } },
    ],
    { lane: sessionId },
  );
  const result = await env.agent.ask(sessionOptions(sessionId), { text: 'note milk' });
  expect(result.turn.outcome).toBe('completed');
  await env.agent.end(sessionId);
  await env.client.workflow.getHandle(`session-${sessionId}`).result();
  await tracing.processor.forceFlush();

  const spans = exporter.getFinishedSpans();
  const send = spans.find((s) => s.name === 'UpdateWithStartWorkflow:sendMessage');
  expect(send).toBeDefined();
  const traceId = send!.spanContext().traceId;
  const inTrace = spans.filter((s) => s.spanContext().traceId === traceId);

  // The model calls: GenAI spans under the activity that ran them, under the workflow's schedule, under the client's send.
  const chats = inTrace.filter((s) => s.name === 'chat scripted');
  expect(chats).toHaveLength(2);
  for (const chat of chats) {
    const path = chain(chat, inTrace);
    expect(path[0]).toBe('chat scripted');
    expect(path[1]).toBe('RunActivity:callModel');
    expect(path[2]).toBe('StartActivity:callModel');
    expect(path.at(-1)).toBe('UpdateWithStartWorkflow:sendMessage');
    expect(path).toContain('RunWorkflow:agentSession');
    expect(chat.attributes).toMatchObject({ 'gen_ai.operation.name': 'chat', 'gen_ai.system': 'openai', 'gen_ai.request.model': 'scripted' });
    expect(chat.attributes['gen_ai.usage.input_tokens']).toEqual(expect.any(Number));
    expect(chat.attributes['gen_ai.usage.output_tokens']).toEqual(expect.any(Number));
  }
  expect(chats.map((c) => c.attributes['gen_ai.response.finish_reasons'])).toEqual([['tool_calls'], ['stop']]);
  // The tool ran as an activity of the same workflow, in the same trace.
  const tool = inTrace.find((s) => s.name === 'RunActivity:executeTool');
  expect(chain(tool!, inTrace)).toEqual(['RunActivity:executeTool', 'StartActivity:executeTool', 'RunWorkflow:agentSession', 'UpdateWithStartWorkflow:sendMessage']);
  expect(log.runs.filter((r) => r.key.startsWith(`${sessionId}:`))).toHaveLength(1);
  // Nothing leaks into the span names or attributes: no message text, no arguments.
  expect(JSON.stringify(inTrace.map((s) => [s.name, s.attributes]))).not.toMatch(/milk|Noted/);
}, 120_000);

it('off costs nothing: without a provider the model\'s tracer makes no-op spans', async () => {
  await tracing.shutdown();
  const span = trace.getTracer('durable-agent').startSpan('probe');
  expect(span.isRecording()).toBe(false);
  span.end();
  // Started again for afterAll's shutdown to be harmless.
  tracing = startTracing({ serviceName: 'durable-agent-test', exporter: new InMemorySpanExporter() });
});
