/**
 * What each local embedding model costs in a worker process: load time, RSS
 * added by loading, and milliseconds per short text (one at a time, and in
 * batches where the model allows them). Each model is measured in a fresh
 * child process, so one model's memory is not counted against another.
 *
 *   npx tsx bench/local-embedders.ts [model ...]
 *
 * Figures in docs/memory.md, "Embedders". Absolute times depend on the load
 * of the machine; compare the models within one run.
 */
import { execFileSync } from 'node:child_process';
import { LocalEmbedder } from '../activities/memory/local-embedder';
import { isLocalModelName, LOCAL_MODEL_NAMES, type LocalModelName } from '../activities/memory/local-models';
import { median, round } from './support/stats';

const TEXTS = Array.from({ length: 60 }, (_, i) => `The user mentioned that friend number ${i} moved to Lisbon last spring and now works as a nurse.`);

async function measure(name: LocalModelName): Promise<Record<string, number | string>> {
  const before = process.memoryUsage().rss;
  const embedder = new LocalEmbedder(name);
  const loadMs = await embedder.warmUp();
  await embedder.embed(TEXTS.slice(0, 5));
  const loadedRss = process.memoryUsage().rss;
  const single: number[] = [];
  for (const text of TEXTS) {
    const started = performance.now();
    await embedder.embed([text]);
    single.push(performance.now() - started);
  }
  const started = performance.now();
  await embedder.embed(TEXTS);
  const batchMs = (performance.now() - started) / TEXTS.length;
  return {
    model: name,
    load_ms: round(loadMs),
    rss_added_mb: round((loadedRss - before) / 1048576),
    rss_after_mb: round(process.memoryUsage().rss / 1048576),
    ms_per_text_single_median: round(median(single)),
    ms_per_text_in_one_call: round(batchMs),
    batched: String(embedder.spec.batchable),
  };
}

async function main(args: string[]): Promise<void> {
  if (args[0] === '--child') {
    process.stdout.write(`${JSON.stringify(await measure(args[1] as LocalModelName))}\n`);
    return;
  }
  const names = args.length > 0 ? args.filter(isLocalModelName) : LOCAL_MODEL_NAMES;
  for (const name of names) {
    const out = execFileSync(process.execPath, ['--import', 'tsx', __filename, '--child', name], { encoding: 'utf8' });
    process.stdout.write(out);
  }
}

main(process.argv.slice(2)).catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
