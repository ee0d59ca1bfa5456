import type OpenAI from 'openai';
import { offlineEmbedding } from '../../scripted-model/offline-embedding';
import { classifyModelError } from '../model-errors';
import { parseEmbedderChoice } from './embedder-choice';
import { LocalEmbedder } from './local-embedder';
import { isRoutedModelName } from './local-models';
import { RoutedEmbedder } from './routed-embedder';

/**
 * Turns texts into vectors. The id names the vector space: memories embedded
 * under one id are only ever compared with queries embedded under the same id.
 */
export interface Embedder {
  readonly id: string;
  /** Vector length; 0 until an embedder that learns it from the API has made its first call. */
  readonly dims: number;
  /** Embeds texts as they are: queries, and memories only through `embedMemories`. */
  embed(texts: string[], options?: { signal?: AbortSignal }): Promise<number[][]>;
  /**
   * How a memory's stored text is worded before this embedder embeds it (the
   * stored text is unchanged; queries are never reworded). Part of the vector
   * space, so an embedder that has it says so in its id. Absent: as stored.
   */
  readonly memoryText?: (stored: string) => string;
  /**
   * The embedder id whose calibrated recall thresholds apply to this query.
   * An embedder of two models (routed-embedder.ts) names the model the query
   * goes to. Absent: its own id.
   */
  thresholdsId?(query: string): string;
  /**
   * Embeds memories' stored texts when wording them is not enough: an
   * embedder of two models picks the model from the stored text, before the
   * wording changes it (routed-embedder.ts). Absent: `memoryText`, then `embed`.
   */
  embedStored?(stored: string[], options?: { signal?: AbortSignal }): Promise<number[][]>;
}

/**
 * Embeds memories' stored texts the way this embedder's memories are embedded.
 * Every path that writes a memory's vector (extraction, re-embedding, imports
 * and benches) goes through here, so their vectors agree.
 */
export function embedMemories(embedder: Embedder, texts: string[], options?: { signal?: AbortSignal }): Promise<number[][]> {
  if (embedder.embedStored) return embedder.embedStored(texts, options);
  const wording = embedder.memoryText;
  return embedder.embed(wording ? texts.map(wording) : texts, options);
}

// Function words and the word "user" say nothing about the topic, but with
// feature hashing every shared one adds similarity; memory texts are written
// in the third person ("the user's ...") and queries in the first ("my ..."),
// so both sides drop them before hashing.
const OFFLINE_STOPWORDS = new Set(
  (
    'a an the and or but if of to in on at for with by from as into about over after before than then so ' +
    'is are was were be been being am do does did has have had will would can could should shall may might must ' +
    'i me my mine myself you your yours we our us they them their he him his she her it its this that these those ' +
    'what which who whom whose when where why how there here s t d ll re ve m ' +
    'user users please tell know again also just very really some any all not no yes'
  ).split(' '),
);

/** Content words of a text, in order: what the offline embedder actually hashes. */
export function offlineTokens(text: string): string[] {
  return (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((w) => !OFFLINE_STOPWORDS.has(w));
}

/**
 * A crude English suffix stripper ("works" -> "work", "answers" -> "answer",
 * "planned" -> "plann"). Applied to both sides alike it only has to be
 * consistent, not linguistic; it lifted recall on the calibration pairs
 * without admitting more unrelated pairs.
 */
export function lightStem(word: string): string {
  if (word.length > 5 && word.endsWith('ing')) return word.slice(0, -3);
  if (word.length > 4 && word.endsWith('ed')) return word.slice(0, -2);
  if (word.length > 4 && word.endsWith('es') && !word.endsWith('ses')) return word.slice(0, -2);
  if (word.length > 3 && word.endsWith('s') && !word.endsWith('ss')) return word.slice(0, -1);
  return word;
}

/**
 * Needs no network and no model: feature hashing over content words (stop
 * words dropped, suffixes stripped) and their character trigrams, using the
 * scripted model's `offlineEmbedding`. It
 * matches shared words and word fragments, not meaning: "car" and
 * "automobile" are unrelated to it. Good for tests, demos and air-gapped
 * installs; use a real embedding model for production recall.
 */
export class OfflineEmbedder implements Embedder {
  readonly id: string;
  constructor(readonly dims = 256) {
    this.id = `offline-hash-v1-d${dims}`;
  }

  async embed(texts: string[]): Promise<number[][]> {
    return texts.map((text) => this.embedOne(text));
  }

  embedOne(text: string): number[] {
    const tokens = offlineTokens(text).map(lightStem);
    // A text of only stopwords still gets a vector of its own words rather than the shared empty vector.
    return offlineEmbedding(tokens.length > 0 ? tokens.join(' ') : text, this.dims);
  }
}

const BATCH = 256;

/** Embeddings through the `openai` SDK's embeddings endpoint (OpenAI, Azure, Ollama, vLLM...). */
export class OpenAIEmbedder implements Embedder {
  readonly id: string;
  private learnedDims = 0;

  constructor(
    private readonly openai: OpenAI,
    readonly model: string,
    private readonly dimensions?: number,
  ) {
    this.id = `openai:${model}${dimensions ? `:d${dimensions}` : ''}`;
  }

  get dims(): number {
    return this.dimensions ?? this.learnedDims;
  }

  async embed(texts: string[], options: { signal?: AbortSignal } = {}): Promise<number[][]> {
    const out: number[][] = [];
    for (let i = 0; i < texts.length; i += BATCH) {
      const input = texts.slice(i, i + BATCH).map((t) => (t.trim() === '' ? ' ' : t));
      let response: Awaited<ReturnType<OpenAI['embeddings']['create']>>;
      try {
        response = await this.openai.embeddings.create(
          { model: this.model, input, encoding_format: 'float', ...(this.dimensions ? { dimensions: this.dimensions } : {}) },
          { signal: options.signal, maxRetries: 0 },
        );
      } catch (err) {
        throw classifyModelError(err, this.model, this.openai.baseURL);
      }
      const vectors = [...response.data].sort((a, b) => a.index - b.index).map((d) => d.embedding);
      if (vectors.length !== input.length) {
        throw classifyModelError(new Error(`the embeddings endpoint returned ${vectors.length} vectors for ${input.length} inputs`), this.model, this.openai.baseURL);
      }
      // A vector of another length, or with a number that is not finite, would be stored and score nothing
      // (or NaN, which spoils the namespace's whole recall copy): refused before anything is written.
      const expected = this.dimensions ?? out[0]?.length ?? (this.learnedDims || vectors[0]?.length);
      for (const [at, vector] of vectors.entries()) {
        const problem = vectorProblem(vector, expected);
        if (problem) throw classifyModelError(new Error(`the embeddings endpoint returned, for input ${i + at}, ${problem}`), this.model, this.openai.baseURL);
      }
      out.push(...vectors);
    }
    if (out[0]) this.learnedDims = out[0].length;
    return out;
  }
}

/** Why `vector` cannot be stored as an embedding of `dims` numbers, or undefined when it can. */
export function vectorProblem(vector: unknown, dims: number | undefined): string | undefined {
  if (!Array.isArray(vector)) return `${typeof vector === 'string' ? 'a string' : typeof vector} where a list of numbers belongs`;
  if (vector.length === 0) return 'an empty vector';
  if (dims !== undefined && dims > 0 && vector.length !== dims) return `a vector of ${vector.length} numbers where ${dims} were expected`;
  // Past float32's range a number becomes Infinity where vectors are packed (the recall copy).
  const bad = vector.findIndex((x) => typeof x !== 'number' || !Number.isFinite(x) || Math.abs(x) > 3.4e38);
  return bad === -1 ? undefined : `a vector whose number ${bad} is ${String(vector[bad])}`;
}

/** Similarity cut-offs for one embedder's score distribution. */
export interface RecallThresholds {
  /** At or above: injected as a remembered fact. */
  strong: number;
  /** At or above (and below strong): injected as a tentative hint. Below: dropped. */
  weak: number;
  /** Where the numbers come from, for logs and docs. */
  basis: string;
}

/**
 * Measured on the labelled pairs in bench/memory-calibration-pairs.ts with
 * bench/memory-thresholds.ts; docs/memory.md explains the choice.
 */
const OFFLINE_THRESHOLDS: RecallThresholds = { strong: 0.45, weak: 0.25, basis: 'measured on the labelled calibration pairs (docs/memory.md)' };
const DEFAULT_THRESHOLDS: RecallThresholds = {
  strong: 0.72,
  weak: 0.5,
  basis: 'general defaults for dense sentence embeddings; measure yours with bench/memory-thresholds.ts',
};

/**
 * Per local model, by embedder id: calibrated on the labelled recall set of
 * the model's language (evaluation/recall-set) by the rule in
 * evaluation/recall-set/calibrate-thresholds.ts, `EMBEDDING_MODEL=local:<name>
 * npx tsx bench/memory-thresholds.ts --set en|zh`. docs/memory.md, "Recall
 * quality and thresholds", has the figures. Edit here when recalibrating.
 */
const LOCAL_THRESHOLDS: Record<string, RecallThresholds> = {
  'local:all-minilm-l6-v2:first-person': { strong: 0.52, weak: 0.23, basis: 'calibrated on the English recall set (docs/memory.md, "Recall quality and thresholds")' },
  'local:all-minilm-l6-v2-q:first-person': { strong: 0.52, weak: 0.25, basis: 'calibrated on the English recall set (docs/memory.md, "Recall quality and thresholds")' },
  'local:bge-small-zh-v15-q': { strong: 0.58, weak: 0.37, basis: 'calibrated on the Chinese recall set: precision at strong never holds 0.9 below 0.58 (docs/memory.md, "Recall quality and thresholds")' },
};

/** Default thresholds for an embedder id; configuration may override either value. */
export function defaultThresholds(embedderId: string): RecallThresholds {
  if (embedderId.startsWith('offline-hash-')) return OFFLINE_THRESHOLDS;
  return LOCAL_THRESHOLDS[embedderId] ?? DEFAULT_THRESHOLDS;
}

export function resolveThresholds(embedderId: string, overrides: { strongThreshold?: number; weakThreshold?: number }): RecallThresholds {
  const base = defaultThresholds(embedderId);
  if (overrides.strongThreshold === undefined && overrides.weakThreshold === undefined) return base;
  const strong = overrides.strongThreshold ?? base.strong;
  // One value overridden against the other's default can cross it; the weak tier is then empty rather than inverted.
  const weak = Math.min(strong, overrides.weakThreshold ?? base.weak);
  return { strong, weak, basis: 'configured (MEMORY_STRONG_THRESHOLD / MEMORY_WEAK_THRESHOLD)' };
}

/**
 * The thresholds recall uses for a query: the configured values when set, else
 * the defaults of the embedder id that applies to the query (`thresholdsId`).
 * Each id's values are resolved once.
 */
export function thresholdsFor(embedder: Embedder, overrides: { strongThreshold?: number; weakThreshold?: number }): (query: string) => RecallThresholds {
  const byId = new Map<string, RecallThresholds>();
  return (query) => {
    const id = embedder.thresholdsId ? embedder.thresholdsId(query) : embedder.id;
    let t = byId.get(id);
    if (!t) {
      t = resolveThresholds(id, overrides);
      byId.set(id, t);
    }
    return t;
  };
}

/**
 * The configured embedder (EMBEDDING_MODEL, see embedder-choice.ts): a local
 * model by default, word hashing for `offline-hash`, the embeddings endpoint
 * for any other name. A local model whose files are missing throws
 * LocalModelMissingError naming the command that fetches them.
 */
export function createEmbedder(options: { openai: OpenAI; embeddingModel?: string; dimensions?: number }): Embedder {
  const choice = parseEmbedderChoice(options.embeddingModel);
  switch (choice.kind) {
    case 'local':
      return isRoutedModelName(choice.name) ? new RoutedEmbedder(choice.name) : new LocalEmbedder(choice.name);
    case 'offline-hash':
      return new OfflineEmbedder(options.dimensions ?? 256);
    case 'endpoint':
      return new OpenAIEmbedder(options.openai, choice.model, options.dimensions);
    case 'invalid':
      throw new Error(`EMBEDDING_MODEL=${options.embeddingModel ?? ''} ${choice.message}`);
    default: {
      const never: never = choice;
      throw new Error(`unknown embedder choice ${JSON.stringify(never)}`);
    }
  }
}
