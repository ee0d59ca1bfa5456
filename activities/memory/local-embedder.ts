import { readFileSync, statSync } from 'node:fs';
import { Tokenizer } from '@huggingface/tokenizers';
import type { InferenceSession, Tensor } from 'onnxruntime-node';
import type { Embedder } from './embedder';
import { firstPersonMemoryText } from './first-person';
import { fetchCommand, localModelPaths, LOCAL_MODELS, type LocalModelName, type LocalModelSpec } from './local-models';

/** A local model's files are absent or not the pinned ones: a setup problem, not a transient one. */
export class LocalModelMissingError extends Error {
  readonly type = 'ConfigInvalid';
  constructor(message: string) {
    super(message);
    this.name = 'LocalModelMissingError';
  }
}

interface LoadedModel {
  tokenizer: Tokenizer;
  session: InferenceSession;
  ort: typeof import('onnxruntime-node');
  sepId: number | undefined;
}

// One tokenizer and one ONNX session per model per process, however many
// embedders or workers the process creates: the fp32 model alone is ~90 MB.
const loaded = new Map<string, Promise<LoadedModel>>();

/**
 * Texts are cut to this many UTF-16 units before tokenizing. A token covers
 * at least one character and English averages about four, so 32 per token
 * leaves the first `maxTokens` tokens of any ordinary text unchanged while a
 * 1 MB input costs no more to tokenize than a page.
 */
const CHARS_PER_TOKEN_BOUND = 32;

/** Texts per inference call for models that allow batches. */
const BATCH = 8;

/**
 * The embedder id of a local model: `local:<name>`, and `:first-person` when
 * its memories are embedded reworded (a vector space of its own, so vectors
 * embedded the older way are never ranked with these).
 */
export function localEmbedderId(name: LocalModelName): string {
  return LOCAL_MODELS[name].memoryWording === 'first-person' ? `local:${name}:first-person` : `local:${name}`;
}

/**
 * Embeds in this process with an ONNX export of a sentence embedding model
 * (onnxruntime-node on CPU, deterministic) and its Hugging Face tokenizer.
 * Files are checked when the embedder is created; the model is loaded on the
 * first `embed`, so a worker that never recalls never pays for it.
 */
export class LocalEmbedder implements Embedder {
  readonly id: string;
  readonly dims: number;
  readonly spec: LocalModelSpec;
  readonly memoryText?: (stored: string) => string;
  private readonly paths: { onnx: string; tokenizer: string };

  constructor(name: LocalModelName, options: { root?: string } = {}) {
    this.spec = LOCAL_MODELS[name];
    this.id = localEmbedderId(name);
    if (this.spec.memoryWording === 'first-person') this.memoryText = firstPersonMemoryText;
    this.dims = this.spec.dims;
    this.paths = localModelPaths(name, options.root);
    checkFiles(this.spec, this.paths);
  }

  async embed(texts: string[], options: { signal?: AbortSignal } = {}): Promise<number[][]> {
    const model = await this.load();
    // Inference holds the event loop while it runs, so calls stay short: a few texts
    // each (~0.1 s for 8 on a loaded 2-core machine), and a cancelled caller stops between them.
    const size = this.spec.batchable ? BATCH : 1;
    const out: number[][] = [];
    for (let i = 0; i < texts.length; i += size) {
      options.signal?.throwIfAborted();
      out.push(...(await this.run(model, texts.slice(i, i + size))));
    }
    return out;
  }

  /** Loads (once per process) and returns how long this call waited for it, in ms. */
  async warmUp(): Promise<number> {
    const started = performance.now();
    await this.load();
    return performance.now() - started;
  }

  private load(): Promise<LoadedModel> {
    const key = this.paths.onnx;
    let model = loaded.get(key);
    if (!model) {
      model = loadModel(this.paths);
      // A failed load is not cached: the next call tries again (files may have been fetched since).
      model.catch(() => loaded.delete(key));
      loaded.set(key, model);
    }
    return model;
  }

  private async run(model: LoadedModel, texts: string[]): Promise<number[][]> {
    const encoded = texts.map((text) => this.tokenize(model, text));
    const batch = encoded.length;
    const width = Math.max(...encoded.map((ids) => ids.length));
    const ids = new BigInt64Array(batch * width);
    const mask = new BigInt64Array(batch * width);
    encoded.forEach((row, b) => {
      row.forEach((id, i) => {
        ids[b * width + i] = BigInt(id);
        mask[b * width + i] = 1n;
      });
    });
    const shape = [batch, width];
    const feeds: Record<string, Tensor> = {
      input_ids: new model.ort.Tensor('int64', ids, shape),
      attention_mask: new model.ort.Tensor('int64', mask, shape),
    };
    if (model.session.inputNames.includes('token_type_ids')) feeds.token_type_ids = new model.ort.Tensor('int64', new BigInt64Array(batch * width), shape);
    const outputs = await model.session.run(feeds);
    const hidden = outputs[model.session.outputNames[0] as string];
    if (!hidden || hidden.dims.length !== 3 || hidden.dims[2] !== this.dims) {
      throw new Error(`${this.id}: unexpected model output shape [${hidden?.dims.join(', ') ?? ''}], expected [batch, tokens, ${this.dims}]`);
    }
    const data = hidden.data as Float32Array;
    return encoded.map((row, b) => normalize(this.pool(data, b * width, this.spec.pooling === 'cls' ? 1 : row.length)));
  }

  /** Averages the first `count` token vectors from token offset `start` (count 1: the first token alone). */
  private pool(data: Float32Array, start: number, count: number): Float64Array {
    const dims = this.dims;
    const sum = new Float64Array(dims);
    for (let t = 0; t < count; t++) {
      const base = (start + t) * dims;
      for (let k = 0; k < dims; k++) sum[k] = (sum[k] as number) + (data[base + k] as number);
    }
    for (let k = 0; k < dims; k++) sum[k] = (sum[k] as number) / count;
    return sum;
  }

  private tokenize(model: LoadedModel, text: string): number[] {
    const ids = model.tokenizer.encode(cutText(text, this.spec.maxTokens * CHARS_PER_TOKEN_BOUND)).ids;
    const max = this.spec.maxTokens;
    if (ids.length <= max) return ids;
    // Keep [CLS] and the first tokens, and end with [SEP] as the model saw in training.
    const last = ids[ids.length - 1] as number;
    return [...ids.slice(0, max - 1), model.sepId ?? last];
  }
}

function checkFiles(spec: LocalModelSpec, paths: { onnx: string; tokenizer: string }): void {
  const problems: string[] = [];
  for (const [file, path] of [
    [spec.onnx, paths.onnx],
    [spec.tokenizer, paths.tokenizer],
  ] as const) {
    let size: number;
    try {
      size = statSync(path).size;
    } catch {
      problems.push(`${path} is missing`);
      continue;
    }
    if (size !== file.bytes) problems.push(`${path} has ${size} bytes, expected ${file.bytes}`);
  }
  if (problems.length > 0) {
    throw new LocalModelMissingError(
      `The embedding model ${spec.name} is not installed: ${problems.join('; ')}. ` +
        `Run \`${fetchCommand(spec.name as LocalModelName)}\` to download and check it, ` +
        'or choose another embedder with EMBEDDING_MODEL (docs/memory.md, "Embedders").',
    );
  }
}

async function loadModel(paths: { onnx: string; tokenizer: string }): Promise<LoadedModel> {
  // Required here rather than at the top: the native runtime loads only in processes that embed locally.
  const ort = (await import('onnxruntime-node')) as typeof import('onnxruntime-node');
  const json = JSON.parse(readFileSync(paths.tokenizer, 'utf8')) as object;
  const tokenizer = new Tokenizer(json, {});
  const session = await ort.InferenceSession.create(paths.onnx, {
    // One thread per inference: a query is a few dozen tokens, too few to gain from
    // splitting, and the worker's event loop and other sessions need the other core.
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
  });
  return { tokenizer, session, ort, sepId: tokenizer.token_to_id('[SEP]') };
}

/** The first `max` UTF-16 units of a text, never splitting a surrogate pair. */
function cutText(text: string, max: number): string {
  if (text.length <= max) return text;
  const code = text.charCodeAt(max - 1);
  return text.slice(0, code >= 0xd800 && code <= 0xdbff ? max - 1 : max);
}

function normalize(v: Float64Array): number[] {
  let norm = 0;
  for (const x of v) norm += x * x;
  norm = Math.sqrt(norm);
  // An all-zero vector cannot be normalized; it stays zero and matches nothing.
  return Array.from(v, (x) => (norm > 0 ? x / norm : 0));
}
