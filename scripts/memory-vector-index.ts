import { parseArgs } from 'node:util';
import OpenAI from 'openai';
import { createEmbedder } from '../activities/memory/embedder';
import { MEMORIES_COLLECTION } from '../activities/memory/memory-store';
import { isUnsupportedSearch, vectorIndexDefinition } from '../activities/memory/vector-search';
import { loadConfig } from '../workers/config';
import { connectMongo } from '../workers/dependencies';

/**
 * `npm run memory:vector-index [-- --print] [--dims N]`: creates the Atlas
 * Vector Search index recall uses (MEMORY_VECTOR_INDEX, default
 * memory_vectors) on the configured database, sized for the configured
 * embedder; `--print` only prints the definition (for the Atlas UI, the Atlas
 * CLI or Terraform). On a server without Atlas Search it says so and exits 3.
 */
async function main(): Promise<void> {
  const { values } = parseArgs({ options: { print: { type: 'boolean', default: false }, dims: { type: 'string' } } });
  const config = loadConfig({ ...process.env, OPENAI_BASE_URL: process.env.OPENAI_BASE_URL?.trim() || 'http://127.0.0.1:9/v1' });
  let dims = values.dims ? Number(values.dims) : 0;
  if (!dims) {
    const openai = new OpenAI({ baseURL: config.model.baseUrl, apiKey: config.model.apiKey ?? 'not-needed', timeout: config.model.requestTimeoutMs });
    const embedder = createEmbedder({ openai, embeddingModel: config.model.embeddingModel, dimensions: config.memory.embeddingDims });
    // An endpoint embedder learns its vector length from its first call.
    dims = embedder.dims || ((await embedder.embed(['vector length']))[0]?.length ?? 0);
  }
  if (!Number.isInteger(dims) || dims < 1) throw new Error('could not tell the vector length; pass --dims N');
  const index = vectorIndexDefinition(config.memory.vectorSearchIndex, dims);
  if (values.print) {
    process.stdout.write(`${JSON.stringify({ collection: MEMORIES_COLLECTION, database: config.mongodb.database, ...index }, null, 2)}\n`);
    return;
  }
  const mongo = await connectMongo(config);
  try {
    const name = await mongo.db(config.mongodb.database).collection(MEMORIES_COLLECTION).createSearchIndex(index);
    process.stdout.write(`created search index ${name} on ${config.mongodb.database}.${MEMORIES_COLLECTION} (${dims} dimensions); Atlas builds it in the background, and workers use it once it is queryable (MEMORY_VECTOR_SEARCH=auto probes at their start)\n`);
  } catch (err) {
    if (!isUnsupportedSearch(err)) throw err;
    process.stderr.write(`memory:vector-index: this MongoDB server has no Atlas Vector Search (${(err as Error).message}); recall ranks in the worker here, no index is needed\n`);
    process.exitCode = 3;
  } finally {
    await mongo.close();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`memory:vector-index: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
