/**
 * `npx tsx bench/memory.ts` (or `npm run bench:memory`): recall latency, warm and cold.
 *
 * Seeds 2,000 memories in one namespace and 49 more namespaces (50 in the
 * collection) in a bench database of its own (`bench_memory_<run id>`,
 * dropped before and after) on the local stack's MongoDB-compatible server,
 * then times `recallMemories` end to end (embed the message, check the
 * namespace generation, score, tier, format):
 *
 * - the first recall of the big namespace with no stored copy anywhere: a
 *   full read of its memories (on FerretDB a scan of the whole collection),
 *   with a breakdown of where that time goes;
 * - the cold recall: the first recall in fresh processes (new heap, module
 *   state and recall cache; MongoDB connected as a worker is at start), which
 *   find the namespace's stored recall copy; checked to give the same result
 *   as a warm recall of the same query;
 * - warm recalls, and the recall right after this worker's own write.
 *
 * All of it with the configured embedder (EMBEDDING_MODEL, as the worker
 * builds it). Then recall quality on the labelled recall set
 * (evaluation/recall-set), per language, each set written to a database of
 * its own and every case recalled through `recallMemories`: for the
 * configured embedder, side by side for word hashing, and for Chinese also
 * with the Chinese model (`--zh-embedder`) unless that is the configured
 * embedder's Chinese part (the default, local:en-zh-q).
 *
 * The last line printed is one JSON object.
 *
 *   npx tsx bench/memory.ts [--queries 200] [--memories 2000] [--namespaces 50] [--others 100] [--cold-runs 3]
 *                           [--zh-embedder local:bge-small-zh-v15-q] [--skip-latency] [--skip-quality]
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { promisify } from 'node:util';
import { MongoClient } from 'mongodb';
import OpenAI from 'openai';
import { createEmbedder, embedMemories, OfflineEmbedder, type Embedder } from '../activities/memory/embedder';
import { createMemoryActivities } from '../activities/memory/memory-activities';
import type { MemoryActivities } from '../activities/memory/memory-activity-types';
import { defaultMemoryConfig } from '../activities/memory/memory-config';
import { MemoryRepository } from '../activities/memory/memory-repository';
import type { MemoryNamespace } from '../activities/memory/memory-types';
import { EN_RECALL_SET, ZH_RECALL_SET, type RecallSet } from '../evaluation/recall-set';
import { ensureStack } from '../scripts/stack';
import { BENCH_QUERIES, DAY, seedInputs, type SeedInput } from './support/memory-seed';
import { recalledTiers } from './support/recalled-tiers';
import { runRecallSet, type RecallSetRun } from './support/recall-set-bench';
import { fullReadBreakdown } from './support/recall-load-breakdown';
import { median, percentile, round } from './support/stats';
import { intOption } from './support/int-option';
import { RoutedEmbedder } from '../activities/memory/routed-embedder';
import { applyWorkerInterruptBudget } from './support/worker-v8';

const TARGET_P95_MS = 20;
const TARGET_COLD_MS = 100;
// A database of its own per run, so two runs on one stack cannot drop each other's data.
const DATABASE = `bench_memory_${randomUUID().slice(0, 8)}`;
const COLD_CHILD = join(__dirname, 'support', 'cold-recall-child.ts');

function options() {
  const { values } = parseArgs({
    options: {
      queries: { type: 'string', default: '200' },
      memories: { type: 'string', default: '2000' },
      namespaces: { type: 'string', default: '50' },
      others: { type: 'string', default: '100' },
      'cold-runs': { type: 'string', default: '3' },
      'zh-embedder': { type: 'string', default: 'local:bge-small-zh-v15-q' },
      'skip-latency': { type: 'boolean', default: false },
      'skip-quality': { type: 'boolean', default: false },
    },
  });
  return {
    queries: intOption('queries', values.queries, 1, 100_000),
    memories: intOption('memories', values.memories, 1, 100_000),
    namespaces: intOption('namespaces', values.namespaces, 1, 10_000),
    others: intOption('others', values.others, 0, 100_000),
    coldRuns: intOption('cold-runs', values['cold-runs'], 1, 50),
    zhEmbedder: values['zh-embedder'],
    skipLatency: values['skip-latency'] ?? false,
    skipQuality: values['skip-quality'] ?? false,
  };
}

const log = (line: string): void => void process.stderr.write(`${line}\n`);

interface ColdChildReport {
  first_recall_ms: number;
  second_recall_ms: number;
  full_reads: number;
  tiers: string;
  parts: { entries: number; bytes: number; generation_ms: number; fetch_ms: number; bson_decode_ms: number; copy_decode_ms: number };
}

async function coldRecallInFreshProcess(mongoUri: string, namespace: MemoryNamespace, query: string): Promise<ColdChildReport> {
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', COLD_CHILD, mongoUri, DATABASE, JSON.stringify(namespace), query], { timeout: 120_000 });
  const last = stdout.trim().split('\n').at(-1) ?? '';
  return JSON.parse(last) as ColdChildReport;
}

type Options = ReturnType<typeof options>;

/** As the worker builds it: EMBEDDING_MODEL and EMBEDDING_DIMS, an endpoint's OPENAI_BASE_URL and OPENAI_API_KEY. */
function configuredEmbedder(embeddingModel = process.env.EMBEDDING_MODEL): Embedder {
  const openai = new OpenAI({ baseURL: process.env.OPENAI_BASE_URL ?? 'https://api.openai.com/v1', apiKey: process.env.OPENAI_API_KEY ?? 'unused', maxRetries: 2 });
  const dims = process.env.EMBEDDING_DIMS ? Number(process.env.EMBEDDING_DIMS) : undefined;
  return createEmbedder({ openai, embeddingModel, dimensions: dims });
}

/** The seed's texts embedded by the bench's embedder (the seed itself is built with word hashing). */
async function embedSeed(inputs: SeedInput[], embedder: Embedder): Promise<SeedInput[]> {
  if (embedder.id === new OfflineEmbedder().id) return inputs;
  const vectors = await embedMemories(embedder, inputs.map((s) => s.input.text));
  return inputs.map((s, i) => ({ ...s, input: { ...s.input, embedding: vectors[i] ?? [], embedderId: embedder.id } }) as SeedInput);
}

async function main(): Promise<void> {
  const opts = options();
  // Recall runs in a worker: measure it under the worker's V8 settings.
  const v8InterruptBudget = applyWorkerInterruptBudget();
  const stack = await ensureStack({ log: (line) => log(`[stack] ${line}`) });
  const mongo = await new MongoClient(stack.mongoUri).connect();
  try {
    const info = await mongo.db(DATABASE).admin().command({ buildInfo: 1 });
    const backend = 'ferretdbVersion' in info || 'ferretdb' in info ? 'ferretdb' : `mongodb ${String(info.version)}`;
    const embedder = configuredEmbedder();
    const latency = opts.skipLatency ? {} : await latencyReport(mongo, stack.mongoUri, opts, embedder, backend);
    const quality = opts.skipQuality ? undefined : await qualityReport(mongo, opts, embedder);
    const report = {
      ...latency,
      ...(quality ? flatQuality(quality) : {}),
      ...(quality ? { quality } : {}),
      embedder: embedder.id,
      backend,
      v8_interrupt_budget: v8InterruptBudget,
      // The machine is shared: the 1-minute load average at the end says how busy it was.
      load_average: round(loadavg()[0] ?? 0, 2),
    };
    console.log(JSON.stringify(report));
  } finally {
    await mongo.close();
  }
}

type QualityByLanguage = Record<'en' | 'zh', Record<string, RecallSetRun>>;

/** The configured embedder's figures as flat keys (`top1_accuracy_en`, ...), and the Chinese model's for Chinese when it was run. */
function flatQuality(quality: QualityByLanguage): Record<string, number | null> {
  const out: Record<string, number | null> = {};
  for (const language of ['en', 'zh'] as const) {
    const runs = quality[language];
    for (const [suffix, run] of [['', runs.configured], ['_chinese_model', runs.chinese_model]] as const) {
      if (!run || (suffix !== '' && language !== 'zh')) continue;
      out[`precision_at_strong_${language}${suffix}`] = run.precision_at_strong;
      out[`recall_at_5_${language}${suffix}`] = run.recall_at_5;
      out[`top1_accuracy_${language}${suffix}`] = run.top1_accuracy;
    }
  }
  return out;
}

/** Each labelled set through `recallMemories`, in a database of its own per set and embedder (dropped before and after). */
async function qualityReport(mongo: MongoClient, opts: Options, configured: Embedder): Promise<QualityByLanguage> {
  const openai = new OpenAI({ baseURL: 'http://127.0.0.1:9/v1', apiKey: 'unused', maxRetries: 0 });
  const offline = new OfflineEmbedder();
  const now = new Date();
  const out: QualityByLanguage = { en: {}, zh: {} };
  let n = 0;
  const run = async (set: RecallSet, embedder: Embedder): Promise<RecallSetRun> => {
    const db = mongo.db(`${DATABASE}_q${n++}`);
    await db.dropDatabase();
    try {
      const started = performance.now();
      const result = await runRecallSet(db, openai, set, embedder, defaultMemoryConfig(), now);
      log(`[bench] recall set ${set.language} with ${embedder.id} (strong ${result.thresholds.strong}, weak ${result.thresholds.weak}), ${set.cases.length} cases in ${round((performance.now() - started) / 1000, 1)} s: precision_at_strong ${result.precision_at_strong} (${result.strong_returned} strong), recall_at_5 ${result.recall_at_5}, top1_accuracy ${result.top1_accuracy}, forbidden returned ${result.forbidden_returned}`);
      return result;
    } finally {
      await db.dropDatabase().catch(() => undefined);
    }
  };
  for (const set of [EN_RECALL_SET, ZH_RECALL_SET]) {
    out[set.language].configured = await run(set, configured);
    out[set.language].offline_hash = configured.id === offline.id ? (out[set.language].configured as RecallSetRun) : await run(set, offline);
  }
  // An English model cannot judge the Chinese set; the Chinese model is measured beside it.
  if (configured instanceof RoutedEmbedder && `local:${configured.parts.han.spec.name}` === opts.zhEmbedder) {
    log(`[bench] the Chinese set is not run again with ${opts.zhEmbedder}: it is the configured embedder's Chinese part`);
  } else if (opts.zhEmbedder && opts.zhEmbedder !== process.env.EMBEDDING_MODEL) {
    try {
      out.zh.chinese_model = await run(ZH_RECALL_SET, configuredEmbedder(opts.zhEmbedder));
    } catch (err) {
      log(`[bench] the Chinese set with ${opts.zhEmbedder} was not run: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  return out;
}

async function latencyReport(mongo: MongoClient, mongoUri: string, opts: Options, embedder: Embedder, backend: string) {
  try {
    const db = mongo.db(DATABASE);
    await db.dropDatabase();
    const repo = new MemoryRepository(db);
    await repo.ensureIndexes();
    const now = new Date();
    // A local model loads on its first call: a worker pays that at its first recall, not per recall.
    const loadStarted = performance.now();
    await embedder.embed(['warm up']);
    const embedderLoadMs = performance.now() - loadStarted;

    const target: MemoryNamespace = { tenant: 'bench', user: 'big-user' };
    const seedStarted = performance.now();
    log(`[bench] seeding ${opts.memories} memories in ${JSON.stringify(target)} and ${opts.others} in each of ${opts.namespaces - 1} other namespaces (${backend})`);
    await repo.forNamespace(target).importMany(await embedSeed(seedInputs(opts.memories, 'bench-seed', now, new OfflineEmbedder()), embedder), now);
    for (let i = 1; i < opts.namespaces; i++) {
      await repo.forNamespace({ tenant: `tenant-${i % 7}`, user: `user-${i}` }).importMany(await embedSeed(seedInputs(opts.others, `bench-seed-${i}`, now, new OfflineEmbedder()), embedder), now);
    }
    const total = await db.collection('memories').countDocuments({});
    log(`[bench] seeded ${total} memories in ${round((performance.now() - seedStarted) / 1000, 1)} s`);

    const breakdown = await fullReadBreakdown(db, repo.forNamespace(target), now);
    log(`[bench] a full read of the namespace, step by step: ${JSON.stringify(breakdown)}`);

    const openai = new OpenAI({ baseURL: 'http://127.0.0.1:9/v1', apiKey: 'unused', maxRetries: 0 });
    const memory: MemoryActivities = createMemoryActivities({ db, openai, embedder, modelName: 'unused', config: defaultMemoryConfig(), log: { debug: () => undefined, warn: log } });
    const recall = async (query: string, turn: number) => {
      const t = performance.now();
      const result = await memory.recallMemories({ namespace: target, query, sessionId: 'bench', turnId: `turn-${turn}` });
      return { ms: performance.now() - t, result };
    };

    // No worker has read this namespace yet: a full read, which then stores the copy.
    const first = await recall(BENCH_QUERIES[0] as string, 0);
    log(`[bench] first recall with no stored copy (full read, then the copy stored): ${round(first.ms, 1)} ms`);
    for (let i = 0; i < 10; i++) await recall(BENCH_QUERIES[i % BENCH_QUERIES.length] as string, i);

    const cold: ColdChildReport[] = [];
    for (let i = 0; i < opts.coldRuns; i++) {
      const report = await coldRecallInFreshProcess(mongoUri, target, BENCH_QUERIES[i % BENCH_QUERIES.length] as string);
      cold.push(report);
      log(`[bench] cold recall in a fresh process: ${round(report.first_recall_ms, 1)} ms (full reads: ${report.full_reads}); copy path ${JSON.stringify(report.parts)}`);
    }
    // The cold result must be what a warm recall of the same query gives.
    let coldMismatches = 0;
    for (const [i, report] of cold.entries()) {
      const warmResult = (await recall(BENCH_QUERIES[i % BENCH_QUERIES.length] as string, i)).result;
      if (recalledTiers(warmResult) !== report.tiers) coldMismatches++;
    }

    const warm: number[] = [];
    let strong = 0;
    let weak = 0;
    log(`[bench] measuring ${opts.queries} warm recalls`);
    for (let i = 0; i < opts.queries; i++) {
      const { ms, result } = await recall(BENCH_QUERIES[i % BENCH_QUERIES.length] as string, i);
      warm.push(ms);
      strong += result.strong.length;
      weak += result.weak.length;
    }

    // This worker's own write is applied to its copy in place (and the stored copy replaced), so the next recall need not reload.
    const afterWrite: number[] = [];
    const writes: number[] = [];
    const me = repo.forNamespace(target);
    for (let i = 0; i < 3; i++) {
      const text = `The user's reload probe ${i} is value ${i}.`;
      const [embedding = []] = await embedMemories(embedder, [text]);
      const t = performance.now();
      await me.writeFact(
        { subject: 'user', predicate: `reload probe ${i}`, key: `user|reload probe ${i}`, value: `value ${i}`, text, embedding, embedderId: embedder.id, source: { sessionId: 'bench', turnId: `w-${i}`, messageIndex: 0, role: 'user', origin: 'user' }, statedAt: new Date(), expiresAt: new Date(Date.now() + DAY) },
        { actor: { by: 'extraction' }, now: new Date() },
      );
      writes.push(performance.now() - t);
      afterWrite.push((await recall(BENCH_QUERIES[1] as string, i)).ms);
    }

    const coldMs = median(cold.map((c) => c.first_recall_ms));
    const report = {
      recall_ms_median: round(median(warm), 3),
      recall_ms_p95: round(percentile(warm, 95), 3),
      recall_ms_max: round(Math.max(...warm), 3),
      target_p95_ms: TARGET_P95_MS,
      meets_target: percentile(warm, 95) <= TARGET_P95_MS,
      cold_recall_ms: round(coldMs, 1),
      cold_recall_ms_max: round(Math.max(...cold.map((c) => c.first_recall_ms)), 1),
      cold_runs: cold.length,
      cold_full_reads: cold.reduce((sum, c) => sum + c.full_reads, 0),
      cold_results_match_warm: coldMismatches === 0,
      target_cold_ms: TARGET_COLD_MS,
      meets_cold_target: coldMs <= TARGET_COLD_MS && coldMismatches === 0,
      recall_copy_bytes: cold[0]?.parts.bytes,
      cold_copy_fetch_ms_median: round(median(cold.map((c) => c.parts.fetch_ms)), 1),
      cold_copy_decode_ms_median: round(median(cold.map((c) => c.parts.bson_decode_ms + c.parts.copy_decode_ms)), 1),
      first_recall_full_read_ms: round(first.ms, 1),
      cold_vs_full_read: round(coldMs / first.ms, 3),
      full_read: breakdown,
      recall_after_own_write_ms_median: round(median(afterWrite), 1),
      write_ms_median: round(median(writes), 1),
      queries: opts.queries,
      memories_in_namespace: opts.memories,
      namespaces: opts.namespaces,
      memories_total: total,
      avg_strong: round(strong / opts.queries, 2),
      avg_weak: round(weak / opts.queries, 2),
      embedder_load_ms: round(embedderLoadMs, 1),
    };
    log(`[bench] warm recall: median ${report.recall_ms_median} ms, p95 ${report.recall_ms_p95} ms (target p95 <= ${TARGET_P95_MS} ms), max ${report.recall_ms_max} ms`);
    log(`[bench] cold recall ${report.cold_recall_ms} ms (median of ${cold.length} fresh processes; target <= ${TARGET_COLD_MS} ms), against ${report.first_recall_full_read_ms} ms for a full read`);
    log(`[bench] recall right after an own write ${report.recall_after_own_write_ms_median} ms; the write itself ${report.write_ms_median} ms (medians of ${afterWrite.length})`);
    return report;
  } finally {
    await mongo.db(DATABASE).dropDatabase().catch(() => undefined);
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
