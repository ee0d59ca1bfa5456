import { randomUUID } from 'node:crypto';
import { MongoClient, type Db } from 'mongodb';
import OpenAI from 'openai';
import { OfflineEmbedder, type Embedder } from '../../activities/memory/embedder';
import { createMemoryActivities } from '../../activities/memory/memory-activities';
import type { MemoryActivities } from '../../activities/memory/memory-activity-types';
import { defaultMemoryConfig, MemoryConfig } from '../../activities/memory/memory-config';
import { MemoryRepository } from '../../activities/memory/memory-repository';
import { RecallCache } from '../../activities/memory/recall-cache';
import { ScriptedModelServer } from '../../scripted-model';
import type { FactInput, IntentInput, PreferenceInput } from '../../activities/memory/memory-docs';
import type { MemorySource } from '../../activities/memory/memory-types';

/** A database of its own for one test file on the stack's MongoDB-compatible server; `close` drops it. */
export async function openTestDb(name: string): Promise<{ db: Db; close(): Promise<void> }> {
  const uri = process.env.MONGODB_URI;
  if (!uri) throw new Error('MONGODB_URI is not set: run the tests through jest, whose global setup starts the stack');
  const mongo = await new MongoClient(uri).connect();
  const db = mongo.db(`t_${name}_${randomUUID().slice(0, 8)}`.replace(/-/g, '_'));
  return {
    db,
    async close() {
      await db.dropDatabase().catch(() => undefined);
      await mongo.close();
    },
  };
}

export const embedder = new OfflineEmbedder();
export const DAY = 86_400_000;

export function userSource(sessionId: string, turnId: string, messageIndex = 0): MemorySource {
  return { sessionId, turnId, messageIndex, role: 'user', origin: 'user' };
}

interface Common {
  source: MemorySource;
  statedAt: Date;
  expiresAt: Date;
}

export function fact(predicate: string, value: string, common: Common): FactInput {
  const text = `The user's ${predicate} is ${value}.`;
  return { subject: 'user', predicate, key: `user|${predicate}`, value, text, embedding: embedder.embedOne(text), embedderId: embedder.id, ...common };
}

export function preference(statement: string, common: Common & { polarity?: 'prefers' | 'avoids'; topic?: string }): PreferenceInput {
  const polarity = common.polarity ?? 'prefers';
  const text = `The user ${polarity} ${statement}.`;
  return { statement, polarity, ...(common.topic ? { topic: common.topic } : {}), text, embedding: embedder.embedOne(text), embedderId: embedder.id, source: common.source, statedAt: common.statedAt, expiresAt: common.expiresAt };
}

export function intent(statement: string, common: Common): IntentInput {
  const text = `The user is ${statement}.`;
  return { statement, text, embedding: embedder.embedOne(text), embedderId: embedder.id, ...common };
}

/** Randomized tests replay the same way from their seed. */
export { seededRandom } from '../../bench/support/stats';

/** The memory activities over a test database and a scripted model, as the worker builds them. */
export interface MemoryHarness {
  db: Db;
  model: ScriptedModelServer;
  memory: MemoryActivities;
  repo: MemoryRepository;
  close(): Promise<void>;
}

/** Opens a test database and a scripted model and builds the memory activities on them; `clock` is the activities' now. */
export async function openMemoryHarness(name: string, clock: () => Date): Promise<MemoryHarness> {
  const { db, close } = await openTestDb(name);
  const model = await ScriptedModelServer.start();
  const repo = new MemoryRepository(db);
  await repo.ensureIndexes();
  const openai = new OpenAI({ baseURL: model.baseUrl, apiKey: 'test', maxRetries: 0 });
  const memory = createMemoryActivities({ db, openai, embedder, modelName: 'scripted', config: defaultMemoryConfig(), clock, log: { debug: () => undefined, warn: () => undefined } });
  return {
    db,
    model,
    memory,
    repo,
    async close() {
      await model.close();
      await close();
    },
  };
}

/**
 * The memory activities over a database with no model behind them (recall, sweeps, lists), a cache
 * of their own, the given embedder and configuration; their warnings go to `warnings`.
 */
export function memoryActivitiesOn(
  db: Db,
  options: { clock: () => Date; embedder?: Embedder; config?: Partial<MemoryConfig>; warnings?: string[]; debugs?: string[] },
): MemoryActivities {
  const openai = new OpenAI({ baseURL: 'http://127.0.0.1:9/v1', apiKey: 'unused', maxRetries: 0 });
  return createMemoryActivities({
    db,
    openai,
    embedder: options.embedder ?? embedder,
    modelName: 'unused',
    config: MemoryConfig.parse(options.config ?? {}),
    clock: options.clock,
    cache: new RecallCache(),
    log: { debug: (message) => options.debugs?.push(message), warn: (message) => options.warnings?.push(message) },
  });
}
