/**
 * bench:long-session — per-turn latency late in one long scripted session
 * (its last 40 of 300 turns) against early in a young one (turns 6 to 45),
 * the two alternating turn by turn, plus the
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
/** Turns at each end whose medians make the ratio. */
const SPAN = 40;

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
  const youngId = `${sessionId}-young`;
  // Memory off: this measures context growth, and the scripted model does not play the extraction model.
  const optionsOf = (id: string) => ({ sessionId: id, namespace: { tenant: 'bench', user: 'bench' }, limits: { maxHistoryEvents: HISTORY_BUDGET }, memory: { enabled: false } });
  const turn = async (id: string, i: number): Promise<number> => {
    const started = performance.now();
    const { turnId } = await agent.send(optionsOf(id), { text: `message ${i}: the deadline for item ${i} is 2027-01-${String((i % 28) + 1).padStart(2, '0')}` });
    await agent.waitForTurn(id, turnId);
    return performance.now() - started;
  };
  const latencies: number[] = [];
  try {
    /*
     * The long session runs its first TURNS - span turns alone. Its last span turns then alternate,
     * one for one, with turns 6 to 5 + span of a young session on the same worker, so the machine's
     * drift over the run hits both alike (measured one after the other, the ratio swung from 0.8 to
     * 1.8 between runs). A turn's time rises through each run of a session as its history grows and
     * drops after each continue-as-new (a run holds about 37 turns here): span is 40, about a cycle.
     */
    const span = Math.max(1, Math.min(SPAN, Math.floor((TURNS - 1) / 2)));
    for (let i = 1; i <= TURNS - span; i++) {
      latencies.push(await turn(sessionId, i));
      if (i % 50 === 0) process.stderr.write(`turn ${i}/${TURNS}\n`);
    }
    for (let i = 1; i <= 5; i++) await turn(youngId, i);
    const early: number[] = [];
    const late: number[] = [];
    for (let k = 0; k < span; k++) {
      const old = async () => void late.push(await turn(sessionId, TURNS - span + 1 + k));
      const young = async () => void early.push(await turn(youngId, 6 + k));
      if (k % 2 === 0) {
        await old();
        await young();
      } else {
        await young();
        await old();
      }
    }
    latencies.push(...late);
    const histories: number[] = [];
    for await (const wf of client.workflow.list({ query: `WorkflowId = '${workflowIdFor(sessionId)}'` })) histories.push(wf.historyLength);
    const view = await agent.getSession(sessionId);
    const figures = {
      turns: TURNS,
      // The long session's own turns 6-15, measured before the side-by-side part (for reference: drift moves it).
      turn10_ms_median: round(median(latencies.slice(5, 15))),
      turn300_ms_median: round(median(latencies.slice(-10))),
      early_ms_median: round(median(early)),
      late_ms_median: round(median(late)),
      span_turns: span,
      ratio: round(median(late) / median(early)),
      max_history_events: Math.max(...histories),
      history_budget: HISTORY_BUDGET,
      runs: histories.length,
      continued_as_new: view.counters.continuedAsNew,
      summaries_folded: view.counters.summariesFolded,
      window_turns: view.window.length,
    };
    console.log('turns          median ms');
    console.log(`young 6-${5 + figures.span_turns}     ${figures.early_ms_median}   (the long session's 6-15, alone: ${figures.turn10_ms_median})`);
    console.log(`long, last ${figures.span_turns}  ${figures.late_ms_median}   (last 10: ${figures.turn300_ms_median})`);
    console.log(`ratio          ${figures.ratio} (target <= 1.2)`);
    console.log(`history     max ${figures.max_history_events} events per run over ${figures.runs} runs (budget ${HISTORY_BUDGET})`);
    console.log(JSON.stringify(figures));
  } finally {
    await agent.end(sessionId).catch(() => undefined);
    await agent.end(youngId).catch(() => undefined);
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
