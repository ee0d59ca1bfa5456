import { parseArgs } from 'node:util';
import OpenAI from 'openai';
import { createEmbedder } from '../activities/memory/embedder';
import { reembedMemories } from '../activities/memory/reembed';
import { loadConfig } from '../workers/config';
import { connectMongo } from '../workers/dependencies';

/**
 * `npm run memory:reembed [-- --batch 64] [--restart]`: re-embeds every
 * active memory to the embedder the worker is configured with (the same
 * settings: EMBEDDING_MODEL, EMBEDDING_DIMS, OPENAI_*; MONGODB_*). Progress
 * goes to stderr, one line per batch; the final report is one JSON line on
 * stdout. Interrupted (Ctrl-C, a kill), it continues where it stopped when
 * run again; `--restart` begins from the first memory. See docs/memory.md,
 * "Re-embedding".
 */
async function main(): Promise<void> {
  const { values } = parseArgs({ options: { batch: { type: 'string', default: '64' }, restart: { type: 'boolean', default: false } } });
  const batchSize = Number(values.batch);
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 1024) {
    process.stderr.write('memory:reembed: --batch takes a whole number from 1 to 1024\n');
    process.exit(64);
  }
  // The chat model's settings are not used; filled in so they need not be set for this job.
  const config = loadConfig({ ...process.env, OPENAI_BASE_URL: process.env.OPENAI_BASE_URL?.trim() || 'http://127.0.0.1:9/v1' });
  const openai = new OpenAI({ baseURL: config.model.baseUrl, apiKey: config.model.apiKey ?? 'not-needed', timeout: config.model.requestTimeoutMs, maxRetries: 2 });
  // Built as the worker builds it (workers/agent-worker.ts), so the vectors land in the space recall queries.
  const embedder = createEmbedder({ openai, embeddingModel: config.model.embeddingModel, dimensions: config.memory.embeddingDims });
  const mongo = await connectMongo(config);
  const abort = new AbortController();
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      process.stderr.write(`memory:reembed: ${signal}, stopping after the current memory (run again to continue)\n`);
      abort.abort();
    });
  }
  try {
    process.stderr.write(`memory:reembed: re-embedding to ${embedder.id} in ${config.mongodb.database}\n`);
    const report = await reembedMemories(mongo.db(config.mongodb.database), {
      embedder,
      batchSize,
      restart: values.restart,
      signal: abort.signal,
      onProgress: (p) => {
        const share = p.total > 0 ? ` (${((100 * p.done) / p.total).toFixed(1)}%)` : '';
        const eta = p.rate > 0 && p.total > p.done ? `, about ${Math.ceil((p.total - p.done) / p.rate)} s left` : '';
        process.stderr.write(`memory:reembed: ${p.done}/${p.total}${share}, ${p.rate.toFixed(1)}/s, re-embedded ${p.counts.reembedded}, skipped ${p.counts.skipped}, failed ${p.counts.failed}${eta}\n`);
      },
    });
    process.stdout.write(`${JSON.stringify(report)}\n`);
    if (!report.complete || report.failed > 0) process.exitCode = 2;
  } finally {
    await mongo.close();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`memory:reembed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
