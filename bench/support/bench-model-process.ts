/**
 * The bench model (bench-model.ts) in a process of its own, so it shares no
 * Node thread with the workers or the benchmark driving them. Prints
 * `model <baseUrl>` once listening; stops on SIGTERM.
 *
 *   node --import tsx bench/support/bench-model-process.ts <toolSteps> [latencyMs]
 */
import { startBenchModel } from './bench-model';

async function main(): Promise<void> {
  const toolSteps = Number(process.argv[2]);
  if (!Number.isInteger(toolSteps) || toolSteps < 0) throw new Error(`tool steps must be an integer, 0 or more, got ${process.argv[2]}`);
  const latencyMs = Number(process.argv[3] ?? 0);
  if (!Number.isInteger(latencyMs) || latencyMs < 0) throw new Error(`latency must be a whole number of ms, 0 or more, got ${process.argv[3]}`);
  const model = await startBenchModel(toolSteps, latencyMs);
  process.stdout.write(`model ${model.baseUrl}\n`);
  // bench:loop builds its plain loop from what the workflow sent first (system prompt and tools): one line, once.
  void model.waitForRequests(1, { timeoutMs: 3_600_000 }).then(
    () => process.stdout.write(`first-request ${JSON.stringify(model.requests[0]?.body ?? null)}\n`),
    () => undefined,
  );
  const stop = (): void => void model.close().then(() => process.exit(0));
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

main().catch((err: unknown) => {
  process.stderr.write(`bench model: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
