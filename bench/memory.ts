/**
 * `npx tsx bench/memory.ts` (or `npm run bench:memory`): recall latency.
 *
 * Seeds 2,000 memories in one namespace and 49 more namespaces (50 in the
 * collection) in a bench database of its own (`bench_memory_<run id>`,
 * dropped before and after) on the local stack's
 * MongoDB-compatible server, then times `recallMemories` end to end (embed
 * the message, check the namespace generation, score, tier, format) for
 * warm queries against the big namespace. Also reports the cold load and
 * the reload after a write, which on FerretDB are full collection scans.
 * The last line printed is one JSON object.
 *
 *   npx tsx bench/memory.ts [--queries 200] [--memories 2000] [--namespaces 50] [--others 100]
 */
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { MongoClient } from 'mongodb';
import OpenAI from 'openai';
import { OfflineEmbedder } from '../activities/memory/embedder';
import { createMemoryActivities } from '../activities/memory/memory-activities';
import type { MemoryActivities } from '../activities/memory/memory-activity-types';
import { defaultMemoryConfig } from '../activities/memory/memory-config';
import type { FactInput, IntentInput, PreferenceInput } from '../activities/memory/memory-docs';
import { MemoryRepository } from '../activities/memory/memory-repository';
import type { MemoryNamespace } from '../activities/memory/memory-types';
import { ensureStack } from '../scripts/stack';
import { median, percentile, round } from './support/stats';
import { intOption } from './support/int-option';

const TARGET_P95_MS = 20;
// A database of its own per run, so two runs on one stack cannot drop each other's data.
const DATABASE = `bench_memory_${randomUUID().slice(0, 8)}`;
const DAY = 86_400_000;

function options() {
  const { values } = parseArgs({
    options: {
      queries: { type: 'string', default: '200' },
      memories: { type: 'string', default: '2000' },
      namespaces: { type: 'string', default: '50' },
      others: { type: 'string', default: '100' },
    },
  });
  return {
    queries: intOption('queries', values.queries, 1, 100_000),
    memories: intOption('memories', values.memories, 1, 100_000),
    namespaces: intOption('namespaces', values.namespaces, 1, 10_000),
    others: intOption('others', values.others, 0, 100_000),
  };
}

const log = (line: string): void => void process.stderr.write(`${line}\n`);

const TOPICS = ['project', 'team', 'city', 'dog', 'car', 'editor', 'language', 'manager', 'client', 'gym', 'book', 'band', 'course', 'bank', 'doctor', 'school'];
const VALUES = ['Lisbon', 'Apollo', 'Biscuit', 'Neovim', 'TypeScript', 'Rui Costa', 'Acme Corp', 'Zoe', 'Porto', 'Sofia', 'jazz', 'Berlin', 'Python', 'Kotlin', 'tennis', 'Faro'];
const PREFS = ['concise answers', 'answers in Portuguese', 'metric units', 'morning meetings', 'bullet lists', 'code examples in TypeScript', 'no emojis', 'formal tone'];
const PLANS = ['travelling to Berlin', 'moving flat', 'a marathon', 'an AWS exam', 'a product launch', 'a job interview'];
const QUERIES = [
  'What is my project called?',
  'Remind me of my manager',
  'Which city do I live in?',
  'Book a table near my gym',
  'Give me a concise answer about TypeScript',
  'Plan my trip to Berlin',
  'Recommend weekend activities for a friend',
  'What editor do I use for Kotlin?',
  'Draft an email to my client at Acme Corp',
  'How should I prepare for my AWS exam?',
  'Explain HTTP caching',
  'Suggest a book about jazz',
];

/** A deterministic spread of facts, preferences and intents; ids never collide within a namespace. */
function seedInputs(count: number, sessionId: string, now: Date, embedder: OfflineEmbedder) {
  const out: Array<{ kind: 'fact'; input: FactInput } | { kind: 'preference'; input: PreferenceInput } | { kind: 'intent'; input: IntentInput }> = [];
  for (let i = 0; i < count; i++) {
    const source = { sessionId, turnId: `turn-${i}`, messageIndex: 0, role: 'user' as const, origin: 'user' as const };
    const statedAt = new Date(now.getTime() - (i % 300) * DAY);
    const common = { source, statedAt, embedderId: embedder.id };
    const topic = TOPICS[i % TOPICS.length] as string;
    const value = VALUES[(i * 7) % VALUES.length] as string;
    const slot = i % 10;
    if (slot < 6) {
      const predicate = `${topic} ${i}`;
      const text = `The user's ${topic} number ${i} is ${value}.`;
      out.push({ kind: 'fact', input: { ...common, subject: 'user', predicate, key: `user|${predicate}`, value, text, embedding: embedder.embedOne(text), expiresAt: new Date(now.getTime() + 365 * DAY) } });
    } else if (slot < 9) {
      const statement = `${PREFS[i % PREFS.length]} for ${topic} ${i}`;
      const text = `The user prefers ${statement}.`;
      out.push({ kind: 'preference', input: { ...common, statement, polarity: 'prefers', text, embedding: embedder.embedOne(text), expiresAt: new Date(now.getTime() + 730 * DAY) } });
    } else {
      const statement = `preparing ${PLANS[i % PLANS.length]} with ${topic} ${i}`;
      const text = `The user is ${statement}.`;
      out.push({ kind: 'intent', input: { ...common, statement, text, embedding: embedder.embedOne(text), expiresAt: new Date(now.getTime() + (i % 2 === 0 ? 14 : -1) * DAY) } });
    }
  }
  return out;
}

async function main(): Promise<void> {
  const opts = options();
  const stack = await ensureStack({ log: (line) => log(`[stack] ${line}`) });
  const mongo = await new MongoClient(stack.mongoUri).connect();
  try {
    const db = mongo.db(DATABASE);
    await db.dropDatabase();
    const info = await db.admin().command({ buildInfo: 1 });
    const backend = 'ferretdbVersion' in info || 'ferretdb' in info ? 'ferretdb' : `mongodb ${String(info.version)}`;
    const repo = new MemoryRepository(db);
    await repo.ensureIndexes();
    const embedder = new OfflineEmbedder();
    const now = new Date();

    const target: MemoryNamespace = { tenant: 'bench', user: 'big-user' };
    const seedStarted = performance.now();
    log(`[bench] seeding ${opts.memories} memories in ${JSON.stringify(target)} and ${opts.others} in each of ${opts.namespaces - 1} other namespaces (${backend})`);
    await repo.forNamespace(target).importMany(seedInputs(opts.memories, 'bench-seed', now, embedder), now);
    for (let i = 1; i < opts.namespaces; i++) {
      await repo.forNamespace({ tenant: `tenant-${i % 7}`, user: `user-${i}` }).importMany(seedInputs(opts.others, `bench-seed-${i}`, now, embedder), now);
    }
    const total = await db.collection('memories').countDocuments({});
    log(`[bench] seeded ${total} memories in ${round((performance.now() - seedStarted) / 1000, 1)} s`);

    const openai = new OpenAI({ baseURL: 'http://127.0.0.1:9/v1', apiKey: 'unused', maxRetries: 0 });
    const memory: MemoryActivities = createMemoryActivities({ db, openai, embedder, modelName: 'unused', config: defaultMemoryConfig(), log: { debug: () => undefined, warn: log } });
    const recall = async (query: string, turn: number) => {
      const t = performance.now();
      const result = await memory.recallMemories({ namespace: target, query, sessionId: 'bench', turnId: `turn-${turn}` });
      return { ms: performance.now() - t, result };
    };

    const cold = await recall(QUERIES[0] as string, 0);
    log(`[bench] cold recall (loads and decodes the namespace): ${round(cold.ms, 1)} ms`);
    for (let i = 0; i < 10; i++) await recall(QUERIES[i % QUERIES.length] as string, i);

    const warm: number[] = [];
    let strong = 0;
    let weak = 0;
    log(`[bench] measuring ${opts.queries} warm recalls`);
    for (let i = 0; i < opts.queries; i++) {
      const { ms, result } = await recall(QUERIES[i % QUERIES.length] as string, i);
      warm.push(ms);
      strong += result.strong.length;
      weak += result.weak.length;
    }

    // A write bumps the generation, so the next recall reloads the namespace: the price of being exact across workers.
    const reload: number[] = [];
    const me = repo.forNamespace(target);
    for (let i = 0; i < 3; i++) {
      const text = `The user's reload probe ${i} is value ${i}.`;
      await me.writeFact(
        { subject: 'user', predicate: `reload probe ${i}`, key: `user|reload probe ${i}`, value: `value ${i}`, text, embedding: embedder.embedOne(text), embedderId: embedder.id, source: { sessionId: 'bench', turnId: `w-${i}`, messageIndex: 0, role: 'user', origin: 'user' }, statedAt: new Date(), expiresAt: new Date(Date.now() + DAY) },
        { actor: { by: 'extraction' }, now: new Date() },
      );
      reload.push((await recall(QUERIES[1] as string, i)).ms);
    }

    const report = {
      recall_ms_median: round(median(warm), 3),
      recall_ms_p95: round(percentile(warm, 95), 3),
      recall_ms_max: round(Math.max(...warm), 3),
      target_p95_ms: TARGET_P95_MS,
      meets_target: percentile(warm, 95) <= TARGET_P95_MS,
      cold_recall_ms: round(cold.ms, 1),
      reload_after_write_ms_median: round(median(reload), 1),
      queries: opts.queries,
      memories_in_namespace: opts.memories,
      namespaces: opts.namespaces,
      memories_total: total,
      avg_strong: round(strong / opts.queries, 2),
      avg_weak: round(weak / opts.queries, 2),
      embedder: embedder.id,
      backend,
    };
    log(`[bench] warm recall: median ${report.recall_ms_median} ms, p95 ${report.recall_ms_p95} ms (target p95 <= ${TARGET_P95_MS} ms), max ${report.recall_ms_max} ms`);
    log(`[bench] cold recall ${report.cold_recall_ms} ms; recall right after a write ${report.reload_after_write_ms_median} ms (median of ${reload.length})`);
    console.log(JSON.stringify(report));
  } finally {
    await mongo.db(DATABASE).dropDatabase().catch(() => undefined);
    await mongo.close();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
