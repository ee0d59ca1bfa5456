/**
 * Measures an embedder on the labelled calibration pairs and prints the
 * recall thresholds the rule in memory-calibration.ts derives from them.
 *
 *   npx tsx bench/memory-thresholds.ts                      offline embedder
 *   EMBEDDING_MODEL=text-embedding-3-small OPENAI_API_KEY=... npx tsx bench/memory-thresholds.ts
 *
 * Set MEMORY_STRONG_THRESHOLD / MEMORY_WEAK_THRESHOLD from its output when
 * you use an embedder whose defaults were not measured here.
 */
import OpenAI from 'openai';
import { createEmbedder, defaultThresholds } from '../activities/memory/embedder';
import { calibrate, quantile } from './memory-calibration';
import { CALIBRATION_PAIRS } from './memory-calibration-pairs';

async function main(): Promise<void> {
  const openai = new OpenAI({ baseURL: process.env.OPENAI_BASE_URL ?? 'https://api.openai.com/v1', apiKey: process.env.OPENAI_API_KEY ?? 'not-needed', maxRetries: 2 });
  const dims = process.env.EMBEDDING_DIMS ? Number(process.env.EMBEDDING_DIMS) : undefined;
  const embedder = createEmbedder({ openai, embeddingModel: process.env.EMBEDDING_MODEL, dimensions: dims });
  const result = await calibrate(embedder, CALIBRATION_PAIRS);
  const describe = (xs: number[]) => {
    const s = [...xs].sort((a, b) => a - b);
    return ['min', 0, 'p25', 0.25, 'median', 0.5, 'p75', 0.75, 'p95', 0.95, 'max', 0.999]
      .reduce<string[]>((out, v, i, all) => (i % 2 === 0 ? [...out, `${v} ${quantile(s, all[i + 1] as number).toFixed(3)}`] : out), [])
      .join(', ');
  };
  const pct = (x: number) => `${Math.round(x * 100)}%`;
  console.log(`embedder ${result.embedderId}, ${result.related.length} related and ${result.unrelated.length} unrelated pairs`);
  console.log(`related:   ${describe(result.related)}`);
  console.log(`unrelated: ${describe(result.unrelated)}`);
  console.log(`suggested strong ${result.strong}: recalls ${pct(result.recallAtStrong)} of related pairs, admits ${pct(result.falseAtStrong)} of unrelated`);
  console.log(`suggested weak   ${result.weak}: recalls ${pct(result.recallAtWeak)} of related pairs (strong or weak), admits ${pct(result.falseAtWeak)} of unrelated`);
  const current = defaultThresholds(embedder.id);
  console.log(`current defaults for this embedder: strong ${current.strong}, weak ${current.weak} (${current.basis})`);
  console.log(JSON.stringify({ embedder: result.embedderId, strong: result.strong, weak: result.weak, recall_at_strong: result.recallAtStrong, recall_at_weak: result.recallAtWeak, false_at_strong: result.falseAtStrong, false_at_weak: result.falseAtWeak }));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
