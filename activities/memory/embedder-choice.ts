import { DEFAULT_LOCAL_EMBEDDING, isLocalEmbeddingName, LOCAL_EMBEDDING_NAMES, type LocalEmbeddingName } from './local-models';

/** The word-hashing embedder's value of EMBEDDING_MODEL. */
export const OFFLINE_HASH = 'offline-hash';
export const LOCAL_PREFIX = 'local:';

/**
 * Which embedder EMBEDDING_MODEL asks for:
 * - unset: the default local embedding (English and Chinese, one model each);
 * - `local:<name>`: a model, or a pair routed by script, that runs in the worker (activities/memory/local-models.ts);
 * - `offline-hash`: word hashing, no model at all;
 * - anything else: that model on the OpenAI-compatible embeddings endpoint.
 */
export type EmbedderChoice =
  | { kind: 'local'; name: LocalEmbeddingName }
  | { kind: 'offline-hash' }
  | { kind: 'endpoint'; model: string };

export function parseEmbedderChoice(value: string | undefined): EmbedderChoice | { kind: 'invalid'; message: string } {
  const v = value?.trim();
  if (!v) return { kind: 'local', name: DEFAULT_LOCAL_EMBEDDING };
  if (v === OFFLINE_HASH) return { kind: 'offline-hash' };
  if (v.startsWith(LOCAL_PREFIX)) {
    const name = v.slice(LOCAL_PREFIX.length);
    if (isLocalEmbeddingName(name)) return { kind: 'local', name };
    return { kind: 'invalid', message: `names no local model "${name}" (known: ${LOCAL_EMBEDDING_NAMES.map((n) => LOCAL_PREFIX + n).join(', ')})` };
  }
  return { kind: 'endpoint', model: v };
}

/** Every value of EMBEDDING_MODEL that selects an in-process embedder, for messages and docs. */
export const LOCAL_CHOICES = [...LOCAL_EMBEDDING_NAMES.map((n) => LOCAL_PREFIX + n), OFFLINE_HASH];
