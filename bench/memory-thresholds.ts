/**
 * Calibrates an embedder's recall thresholds on the labelled recall set
 * (evaluation/recall-set) and prints the figures the rule in
 * evaluation/recall-set/calibrate-thresholds.ts gives, then the old check on
 * the calibration pairs (bench/memory-calibration-pairs.ts), which still
 * sets the word-hashing embedder's values.
 *
 *   npx tsx bench/memory-thresholds.ts                                   the default embedder, on the English set
 *   EMBEDDING_MODEL=local:bge-small-zh-v15-q npx tsx bench/memory-thresholds.ts --set zh
 *   EMBEDDING_MODEL=text-embedding-3-small OPENAI_API_KEY=... npx tsx bench/memory-thresholds.ts --set en
 *
 * The set is the embedder's language (`--set en|zh`, default en). Put the
 * result in `defaultThresholds` (activities/memory/embedder.ts) and the
 * figures in docs/memory.md, or set MEMORY_STRONG_THRESHOLD /
 * MEMORY_WEAK_THRESHOLD for an embedder measured only on your machine.
 * The last line printed is one JSON object.
 */
import { parseArgs } from 'node:util';
import OpenAI from 'openai';
import { createEmbedder, defaultThresholds } from '../activities/memory/embedder';
import { defaultMemoryConfig } from '../activities/memory/memory-config';
import { EN_RECALL_SET, ZH_RECALL_SET } from '../evaluation/recall-set';
import { calibrateThresholds, evaluateAt, type SweepRow } from '../evaluation/recall-set/calibrate-thresholds';
import { embedSet, scoreCases } from '../evaluation/recall-set/recall-set-quality';
import { calibrate } from './memory-calibration';
import { CALIBRATION_PAIRS } from './memory-calibration-pairs';

const row = (r: SweepRow) =>
  `strong ${r.strong.toFixed(2)} weak ${r.weak.toFixed(2)}: precision_at_strong ${r.precision_at_strong ?? '-'} (${r.strong_returned}), recall_at_strong ${r.recall_at_strong}, recall_at_5 ${r.recall_at_5}, top1 ${r.top1_accuracy}, weak/case ${r.weak_per_case}, unanswerable clean ${r.unanswerable_clean}`;

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { set: { type: 'string', default: 'en' } } });
  if (values.set !== 'en' && values.set !== 'zh') throw new Error(`--set must be en or zh, not ${values.set}`);
  const set = values.set === 'zh' ? ZH_RECALL_SET : EN_RECALL_SET;
  const openai = new OpenAI({ baseURL: process.env.OPENAI_BASE_URL ?? 'https://api.openai.com/v1', apiKey: process.env.OPENAI_API_KEY ?? 'not-needed', maxRetries: 2 });
  const dims = process.env.EMBEDDING_DIMS ? Number(process.env.EMBEDDING_DIMS) : undefined;
  const embedder = createEmbedder({ openai, embeddingModel: process.env.EMBEDDING_MODEL, dimensions: dims });
  const config = defaultMemoryConfig();
  const base = { maxStrong: config.maxStrong, maxStrongChars: config.maxStrongChars, maxWeak: config.maxWeak, maxWeakChars: config.maxWeakChars };
  const now = new Date();

  const scored = scoreCases(set, await embedSet(set, embedder), now);
  const result = calibrateThresholds(set, scored, base, now);
  console.log(`embedder ${embedder.id}, ${set.language} set: ${set.cases.length} cases, ${set.memories.length} memories`);
  console.log('strong sweep (weak = strong):');
  for (const r of result.strongSweep.filter((r) => r.strong_returned > 0 && Math.round(r.strong * 100) % 2 === 0)) console.log(`  ${row(r)}`);
  console.log(`weak sweep (strong ${result.strong}):`);
  for (const r of result.weakSweep.filter((r) => Math.round(r.weak * 100) % 5 === 0 || r.weak === result.weak)) console.log(`  ${row(r)}`);
  console.log(`chosen: ${row(result.at)}`);
  const current = defaultThresholds(embedder.id);
  const atCurrent = evaluateAt(set, scored, base, current.strong, Math.min(current.weak, current.strong), now);
  console.log(`current defaults (${current.basis}): ${row(atCurrent)}`);

  const pairs = await calibrate(embedder, CALIBRATION_PAIRS);
  console.log(`calibration pairs (bench/memory-calibration-pairs.ts): the pairs' rule gives strong ${pairs.strong}, weak ${pairs.weak}`);
  console.log(JSON.stringify({ embedder: embedder.id, set: set.language, strong: result.strong, weak: result.weak, at: result.at, current: atCurrent, pairs: { strong: pairs.strong, weak: pairs.weak } }));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
