/**
 * bench:long-session — per-turn latency early (around turn 10) and late
 * (around turn 300) in one long scripted session, side by side, plus the
 * largest history of any run in the continue-as-new chain. Brings up the
 * local stack, a scripted model and a worker itself.
 */
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { AgentClient } from '../client';
import { ScriptedModelServer, type ChatRequest, type StepResponse } from '../scripted-model';
import { ensureStack } from '../scripts/stack';
import { SUMMARIZER_MARKER } from '../activities/summarize-activity';
import { emptySummary } from '../workflows/session-summary';
import { workflowIdFor } from '../workflows/messages';
import { createAgentWorker } from '../workers/agent-worker';
import { loadConfig } from '../workers/config';
import { dataConverterFor } from '../codec/data-converter';
import { median, round } from './support/stats';

const TURNS = Number(process.env.BENCH_TURNS ?? 300);
const HISTORY_BUDGET = Number(process.env.BENCH_HISTORY_BUDGET ?? 1_000);

function answer(req: ChatRequest): StepResponse {
  const system = String(req.messages[0]?.content ?? '');
  if (system.startsWith(SUMMARIZER_MARKER)) return { kind: 'json', value: { ...emptySummary(), notes: ['earlier turns were routine'] } };
  return { kind: 'text', text: `ack: ${String(req.messages.at(-1)?.content ?? '')}` };
}


async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  const stack = await ensureStack({ log: (l) => process.stderr.write(`[stack] ${l}\n`) });
  const model = await ScriptedModelServer.start({ fallback: answer });
  const taskQueue = `bench-long-${Date.now()}`;
  const config = loadConfig({
    ...process.env,
    TEMPORAL_ADDRESS: stack.temporalAddress,
    MONGODB_URI: stack.mongoUri,
    MONGODB_DATABASE: 'bench_long_session',
    TEMPORAL_TASK_QUEUE: taskQueue,
    OPENAI_BASE_URL: model.baseUrl,
    OPENAI_API_KEY: 'bench',
    MAINTENANCE_EVERY_MS: '0',
  });
  const worker = await createAgentWorker(config);
  const running = worker.run();
  const connection = await Connection.connect({ address: config.temporal.address });
  const client = new Client({ connection, namespace: config.temporal.namespace, dataConverter: dataConverterFor(config.encryption) });
  const agent = new AgentClient({ client, taskQueue, principal: { tenant: 'bench', user: 'bench' } });
  const sessionId = `bench-${Date.now()}`;
  // Memory off: this measures context growth, and the scripted model does not play the extraction model.
  const options = { sessionId, namespace: { tenant: 'bench', user: 'bench' }, limits: { maxHistoryEvents: HISTORY_BUDGET }, memory: { enabled: false } };
  const latencies: number[] = [];
  try {
    for (let i = 1; i <= TURNS; i++) {
      const started = performance.now();
      const { turnId } = await agent.send(options, { text: `message ${i}: the deadline for item ${i} is 2027-01-${String((i % 28) + 1).padStart(2, '0')}` });
      await agent.waitForTurn(sessionId, turnId);
      latencies.push(performance.now() - started);
      if (i % 50 === 0) process.stderr.write(`turn ${i}/${TURNS}\n`);
    }
    const histories: number[] = [];
    for await (const wf of client.workflow.list({ query: `WorkflowId = '${workflowIdFor(sessionId)}'` })) histories.push(wf.historyLength);
    const early = latencies.slice(5, 15);
    const late = latencies.slice(-10);
    const view = await agent.getSession(sessionId);
    const figures = {
      turns: TURNS,
      turn10_ms_median: round(median(early)),
      turn300_ms_median: round(median(late)),
      ratio: round(median(late) / median(early)),
      max_history_events: Math.max(...histories),
      history_budget: HISTORY_BUDGET,
      runs: histories.length,
      continued_as_new: view.counters.continuedAsNew,
      summaries_folded: view.counters.summariesFolded,
      window_turns: view.window.length,
    };
    console.log('turn        median ms');
    console.log(`~10         ${figures.turn10_ms_median}`);
    console.log(`~${TURNS}        ${figures.turn300_ms_median}`);
    console.log(`ratio       ${figures.ratio} (target <= 1.2)`);
    console.log(`history     max ${figures.max_history_events} events per run over ${figures.runs} runs (budget ${HISTORY_BUDGET})`);
    console.log(JSON.stringify(figures));
  } finally {
    await agent.end(sessionId).catch(() => undefined);
    worker.worker.shutdown();
    await running;
    await connection.close();
    await model.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
