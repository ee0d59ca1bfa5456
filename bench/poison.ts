/**
 * bench:poison — the poison-input fuzzer of test/integration/poison-inputs
 * at a larger count: random signals, updates, queries, model tool calls and
 * session starts (wrong types, nulls, 20,000-deep nesting, 2–4 MB strings,
 * unknown handler names and fields) sent to live sessions through the raw
 * Temporal client, each batch followed by a check that the session still
 * answers, that its stream parses and that no run of it failed a workflow
 * task. Brings up the local stack, a scripted model and a worker itself. The
 * last line is one JSON object; the exit code is 1 when a session froze or a
 * workflow task failed.
 *
 *   npm run bench:poison -- [--cases 2000] [--seed S] [--batch 20]
 */
import { ensureStack } from '../scripts/stack';
import { startTestEnv } from '../test/support/test-env';
import { PoisonModel, generateFuzzCases, poisonSessionOptions, randomSeed, runCampaign, summaryLine } from '../test/support/poison';
import { intOption } from './support/int-option';

function parseArgs(argv: string[]): { cases: number; seed: number; batch: number } {
  const out = { cases: 2_000, seed: randomSeed(), batch: 20 };
  for (let i = 0; i < argv.length; i += 2) {
    const [flag, value] = [argv[i], argv[i + 1] ?? ''];
    if (flag === '--cases') out.cases = intOption('cases', value, 1, 1_000_000);
    else if (flag === '--seed') out.seed = intOption('seed', value, 0, 0x7fffffff);
    else if (flag === '--batch') out.batch = intOption('batch', value, 1, 1_000);
    else throw new Error(`unknown option ${flag}; expected --cases N, --seed S or --batch B`);
  }
  return out;
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const stack = await ensureStack({ log: (l) => process.stderr.write(`[stack] ${l}\n`) });
  process.env.TEMPORAL_ADDRESS = stack.temporalAddress;
  process.env.TEMPORAL_NAMESPACE = stack.temporalNamespace;
  process.env.MONGODB_URI = stack.mongoUri;
  process.stderr.write(`poison fuzzer: ${args.cases} cases, seed ${args.seed} (run again with --seed ${args.seed})\n`);
  const model = new PoisonModel();
  const env = await startTestEnv({ name: 'bench-poison', modelFallback: model.fallback });
  const started = performance.now();
  try {
    const cases = generateFuzzCases({ seed: args.seed, count: args.cases });
    const tally = await runCampaign(
      { client: env.client, agent: env.agent, taskQueue: env.taskQueue, model },
      cases,
      {
        prefix: `bench-poison-${args.seed}-${Date.now()}`,
        sessionOptions: poisonSessionOptions,
        batchSize: args.batch,
        log: (line) => process.stderr.write(`${line}\n`),
      },
    );
    for (const freeze of tally.freezes) process.stderr.write(`FROZEN ${JSON.stringify(freeze)}\n`);
    for (const problem of tally.streamProblems.slice(0, 20)) process.stderr.write(`STREAM ${problem}\n`);
    console.log(summaryLine(tally, { seed: args.seed, durationMs: Math.round(performance.now() - started) }));
    process.exitCode = tally.frozen > 0 || tally.workflowTaskFailures > 0 ? 1 : 0;
  } finally {
    await env.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
