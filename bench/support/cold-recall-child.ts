/**
 * One cold recall in a process of its own: a new V8 heap, module state and
 * recall cache, a MongoDB client connected the way a worker connects at
 * start (before its first activity). Prints one JSON line: the first recall's
 * time and result, then the parts of the copy path measured after it.
 *
 *   node --import tsx bench/support/cold-recall-child.ts <mongo uri> <database> <namespace json> <query>
 */
import { MongoClient } from 'mongodb';
import OpenAI from 'openai';
import { createEmbedder } from '../../activities/memory/embedder';
import { createMemoryActivities } from '../../activities/memory/memory-activities';
import { defaultMemoryConfig } from '../../activities/memory/memory-config';
import { MemoryRepository } from '../../activities/memory/memory-repository';
import { MemoryNamespace } from '../../activities/memory/memory-types';
import { RecallCache } from '../../activities/memory/recall-cache';
import { copyReadBreakdown } from './recall-load-breakdown';
import { recalledTiers } from './recalled-tiers';
import { applyWorkerInterruptBudget } from './worker-v8';

async function main(): Promise<void> {
  // Recall runs in a worker: under the worker's V8 settings (WORKER_V8_INTERRUPT_BUDGET, inherited).
  applyWorkerInterruptBudget();
  const [uri, database, nsJson, query] = process.argv.slice(2);
  if (!uri || !database || !nsJson || !query) throw new Error('usage: cold-recall-child.ts <mongo uri> <database> <namespace json> <query>');
  const namespace = MemoryNamespace.parse(JSON.parse(nsJson));
  const mongo = await new MongoClient(uri, { monitorCommands: true }).connect();
  // Whether the cold recall read the namespace's memories at all, or only the generation and the copy.
  let memoryReads = 0;
  mongo.on('commandStarted', (e) => {
    if (e.commandName === 'find' && e.command.find === 'memories') memoryReads++;
  });
  try {
    const db = mongo.db(database);
    // Only an endpoint embedder calls it; extraction does not run here.
    const openai = new OpenAI({ baseURL: process.env.OPENAI_BASE_URL ?? 'http://127.0.0.1:9/v1', apiKey: process.env.OPENAI_API_KEY ?? 'unused', maxRetries: 0 });
    const log = { debug: () => undefined, warn: (m: string) => void process.stderr.write(`${m}\n`) };
    const config = defaultMemoryConfig();
    // The worker's default cache, held here only to wait for a background reread (of a copy past its age) before closing.
    const cache = new RecallCache({ maxAgeMs: config.cacheMaxAgeMs, log });
    // The embedder the parent seeded with (EMBEDDING_MODEL, inherited), loaded before the clock starts, as a worker loads it once.
    const embedder = createEmbedder({ openai, embeddingModel: process.env.EMBEDDING_MODEL, dimensions: process.env.EMBEDDING_DIMS ? Number(process.env.EMBEDDING_DIMS) : undefined });
    await embedder.embed(['warm up', '预热']);
    // What a worker does at start, before its first recall: makes the memory indexes (its first
    // operations on the connection pool) and asks whether the server ranks vectors itself.
    const repo = new MemoryRepository(db);
    await repo.ensureIndexes();
    const vectorSearch = repo.vectorSearchProbe(config.vectorSearch, config.vectorSearchIndex, log);
    await vectorSearch.path();
    const memory = createMemoryActivities({ db, openai, embedder, modelName: 'unused', config, cache, log, vectorSearch });
    const started = performance.now();
    const result = await memory.recallMemories({ namespace, query, sessionId: 'bench-cold', turnId: 'turn-1' });
    const firstMs = performance.now() - started;
    const fullReads = memoryReads;
    const parts = await copyReadBreakdown(db, new MemoryRepository(db).forNamespace(namespace));
    const again = performance.now();
    await memory.recallMemories({ namespace, query, sessionId: 'bench-cold', turnId: 'turn-2' });
    const secondMs = performance.now() - again;
    await cache.settled();
    process.stdout.write(`${JSON.stringify({ first_recall_ms: firstMs, second_recall_ms: secondMs, full_reads: fullReads, tiers: recalledTiers(result), parts })}\n`);
  } finally {
    await mongo.close();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
