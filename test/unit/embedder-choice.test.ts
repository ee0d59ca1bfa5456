import OpenAI from 'openai';
import { createEmbedder, defaultThresholds, OfflineEmbedder, OpenAIEmbedder } from '../../activities/memory/embedder';
import { parseEmbedderChoice } from '../../activities/memory/embedder-choice';
import { localEmbedderId } from '../../activities/memory/local-embedder';
import { DEFAULT_LOCAL_EMBEDDING, LOCAL_MODEL_NAMES } from '../../activities/memory/local-models';
import { RoutedEmbedder } from '../../activities/memory/routed-embedder';
import { ConfigError, loadConfig } from '../../workers/config';

const base = { OPENAI_BASE_URL: 'http://127.0.0.1:9999/v1' };
const openai = new OpenAI({ baseURL: base.OPENAI_BASE_URL, apiKey: 'unused' });

describe('EMBEDDING_MODEL picks the embedder', () => {
  it('is the local English and Chinese pair when unset', () => {
    expect(DEFAULT_LOCAL_EMBEDDING).toBe('en-zh-q');
    expect(parseEmbedderChoice(undefined)).toEqual({ kind: 'local', name: 'en-zh-q' });
    expect(parseEmbedderChoice('  ')).toEqual({ kind: 'local', name: 'en-zh-q' });
    const embedder = createEmbedder({ openai, embeddingModel: loadConfig(base).model.embeddingModel });
    expect(embedder).toBeInstanceOf(RoutedEmbedder);
    expect(embedder.id).toBe('local:en-zh-q');
    expect(embedder.dims).toBe(384 + 512);
    expect(createEmbedder({ openai, embeddingModel: 'local:en-zh-q' }).id).toBe('local:en-zh-q');
  });

  it('names a local model with local:<name>, word hashing with offline-hash, and anything else on the embeddings endpoint', () => {
    for (const name of LOCAL_MODEL_NAMES) expect(createEmbedder({ openai, embeddingModel: `local:${name}` }).id).toBe(localEmbedderId(name));
    const hashing = createEmbedder({ openai, embeddingModel: 'offline-hash', dimensions: 128 });
    expect(hashing).toBeInstanceOf(OfflineEmbedder);
    expect(hashing.id).toBe('offline-hash-v1-d128');
    const endpoint = createEmbedder({ openai, embeddingModel: 'text-embedding-3-small' });
    expect(endpoint).toBeInstanceOf(OpenAIEmbedder);
    expect(endpoint.id).toBe('openai:text-embedding-3-small');
  });

  it('refuses an unknown local model at configuration time, listing the known ones', () => {
    expect(() => loadConfig({ ...base, EMBEDDING_MODEL: 'local:all-minilm' })).toThrow(ConfigError);
    expect(() => loadConfig({ ...base, EMBEDDING_MODEL: 'local:all-minilm' })).toThrow(
      /model\.embeddingModel \(EMBEDDING_MODEL\): names no local model "all-minilm" \(known: local:en-zh-q, local:all-minilm-l6-v2, /,
    );
  });

  it('refuses EMBEDDING_DIMS for a local model, whose length is fixed, and keeps it for word hashing', () => {
    expect(() => loadConfig({ ...base, EMBEDDING_DIMS: '256' })).toThrow(/memory\.embeddingDims \(EMBEDDING_DIMS\): does not apply to the local model/);
    expect(loadConfig({ ...base, EMBEDDING_DIMS: '256', EMBEDDING_MODEL: 'offline-hash' }).memory.embeddingDims).toBe(256);
  });

  it('gives every local model thresholds of its own', () => {
    const general = defaultThresholds('openai:some-model');
    for (const name of LOCAL_MODEL_NAMES) {
      const t = defaultThresholds(localEmbedderId(name));
      expect(t).not.toEqual(general);
      expect(t.weak).toBeLessThanOrEqual(t.strong);
    }
  });
});
