import { trace } from '@opentelemetry/api';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { startTracing, type Tracing } from '../../workers/tracing';
import { probeTools, type ProbeLog } from '../support/probe-tools';
import type { ChatRequest } from '../../scripted-model';
import { isSummaryRequest } from '../support/scripted-summarizer';
import { sessionOptions, startTestEnv, uniqueId, type TestEnv } from '../support/test-env';

/*
 * One trace across the client, the session workflow and its activities, down
 * to each model call (steps, summary folds, memory extraction) as a GenAI
 * span, captured with an in-memory exporter.
 */

const exporter = new InMemorySpanExporter();
const log: ProbeLog = { runs: [] };
let tracing: Tracing;
let env: TestEnv;

beforeAll(async () => {
  tracing = startTracing({ serviceName: 'durable-agent-test', exporter });
  // Memory extraction embeds nothing here; the offline embedder spares loading a local model.
  env = await startTestEnv({ name: 'tracing', extraTools: probeTools(log), tracing, configEnv: { EMBEDDING_MODEL: 'offline-hash' } });
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

it('opens the same GenAI span for the summary fold and memory extraction, under their own activities, each with its purpose', async () => {
  exporter.reset();
  const sessionId = uniqueId('traced-purpose');
  const isSummary = (req: unknown) => isSummaryRequest(req as ChatRequest);
  env.model.script(
    [
      { respond: { kind: 'text', text: 'First.' } },
      { respond: { kind: 'text', text: 'Second.' } },
      { match: { where: isSummary }, respond: { kind: 'json', value: { userProfile: [], preferences: [], decisions: [], pendingConfirmations: [], unfinishedIntents: [], notes: [], optionLists: [] } } },
      { match: { where: (req) => !isSummary(req) && (req as { response_format?: unknown }).response_format !== undefined }, respond: { kind: 'json', value: { candidates: [] } } },
    ],
    { lane: sessionId },
  );
  // A one-turn window: the second turn pushes the first out (a fold); ending the session runs extraction.
  const options = sessionOptions(sessionId, { memory: { enabled: true, extractEveryTurns: 100 }, limits: { windowMaxTurns: 1 } });
  await env.agent.ask(options, { text: 'first question' });
  await env.agent.ask(options, { text: 'second question' });
  await env.agent.end(sessionId);
  await env.client.workflow.getHandle(`session-${sessionId}`).result();
  env.model.assertDone(sessionId);
  await tracing.processor.forceFlush();

  const spans = exporter.getFinishedSpans();
  const chats = spans.filter((s) => s.name === 'chat scripted');
  expect(chats.map((c) => c.attributes['durable_agent.model.purpose']).sort()).toEqual(['extraction', 'step', 'step', 'summary']);
  const activityOf = { step: 'callModel', summary: 'summarizeTurns', extraction: 'extractMemories' } as const;
  for (const chat of chats) {
    const activity = activityOf[chat.attributes['durable_agent.model.purpose'] as keyof typeof activityOf];
    const path = chain(chat, spans);
    expect(path.slice(0, 3)).toEqual(['chat scripted', `RunActivity:${activity}`, `StartActivity:${activity}`]);
    expect(path).toContain('RunWorkflow:agentSession');
    expect(chat.attributes).toMatchObject({ 'gen_ai.operation.name': 'chat', 'gen_ai.system': 'openai', 'gen_ai.request.model': 'scripted', 'gen_ai.response.finish_reasons': ['stop'] });
    expect(chat.attributes['gen_ai.usage.input_tokens']).toEqual(expect.any(Number));
    expect(chat.attributes['gen_ai.usage.output_tokens']).toEqual(expect.any(Number));
  }
  // The summary's and extraction's prompts hold the conversation; none of it reaches the spans.
  expect(JSON.stringify(spans.map((s) => [s.name, s.attributes]))).not.toMatch(/question|First\.|Second\./);
}, 120_000);

it('off costs nothing: without a provider the model\'s tracer makes no-op spans', async () => {
  await tracing.shutdown();
  const span = trace.getTracer('durable-agent').startSpan('probe');
  expect(span.isRecording()).toBe(false);
  span.end();
  // Started again for afterAll's shutdown to be harmless.
  tracing = startTracing({ serviceName: 'durable-agent-test', exporter: new InMemorySpanExporter() });
});
