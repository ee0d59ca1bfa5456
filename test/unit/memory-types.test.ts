import { Binary } from 'mongodb';
import { ApplicationFailure } from '@temporalio/common';
import { parseExtractionOutput } from '../../activities/memory/extraction-prompt';
import { memoryIdFor, namespaceKey } from '../../activities/memory/memory-identity';
import { decodeEmbedding, encodeEmbedding, MemoryDocError, parseMemory, tryParseMemory } from '../../activities/memory/memory-types';
import { defaultMemoryConfig } from '../../activities/memory/memory-config';
import { loadConfig } from '../../workers/config';

function storedFact(overrides: Record<string, unknown> = {}) {
  const ns = namespaceKey({ tenant: 'acme', user: 'ana' });
  const at = new Date('2025-01-01T00:00:00Z');
  return {
    _id: memoryIdFor(ns, { kind: 'fact', key: 'user|name' }),
    ns,
    tenant: 'acme',
    user: 'ana',
    kind: 'fact',
    key: 'user|name',
    subject: 'user',
    predicate: 'name',
    value: 'Ana',
    status: 'active',
    text: "The user's name is Ana.",
    embedding: encodeEmbedding([0.6, 0.8]),
    embedderId: 'offline-hash-v1-d256',
    source: { sessionId: 's', turnId: 't', messageIndex: 0, role: 'user', origin: 'user' },
    sourceKeys: ['s:t:0'],
    createdAt: at,
    updatedAt: at,
    statedAt: at,
    expiresAt: new Date('2026-01-01T00:00:00Z'),
    version: 1,
    ...overrides,
  };
}

describe('memory documents', () => {
  it('parse, with the embedding decoded from float32 bytes', () => {
    const doc = parseMemory(storedFact());
    expect(doc.kind).toBe('fact');
    expect(Array.from(doc.embedding).map((x) => Math.round(x * 10) / 10)).toEqual([0.6, 0.8]);
    expect(Array.from(decodeEmbedding(encodeEmbedding([1, -2.5])))).toEqual([1, -2.5]);
  });

  it('embeddings are written as BSON float32 vectors (what Atlas indexes), and the older bare-bytes form still reads', () => {
    const written = encodeEmbedding([0.25, -1, 3]);
    expect(written.sub_type).toBe(Binary.SUBTYPE_VECTOR);
    expect(Array.from(written.toFloat32Array())).toEqual([0.25, -1, 3]);
    expect(Array.from(decodeEmbedding(Binary.fromFloat32Array(new Float32Array([0.5, 2]))))).toEqual([0.5, 2]);
    const legacy = new Binary(new Uint8Array(new Float32Array([0.6, 0.8]).buffer));
    expect(Array.from(parseMemory(storedFact({ embedding: legacy })).embedding).map((x) => Math.round(x * 10) / 10)).toEqual([0.6, 0.8]);
    // A vector of another element type (int8, dtype 0x03) is not taken for float32.
    expect(tryParseMemory(storedFact({ embedding: new Binary(new Uint8Array([0x03, 0, 1, 2, 3, 4]), Binary.SUBTYPE_VECTOR) })).ok).toBe(false);
  });

  it('a malformed document becomes an error naming its id and the bad fields', () => {
    const raw = storedFact({ embedding: [0.6, 0.8], status: 'forgotten' });
    const result = tryParseMemory(raw);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error).toBeInstanceOf(MemoryDocError);
    expect(result.error.memoryId).toBe(raw._id);
    expect(result.error.fields.sort()).toEqual(['embedding', 'status']);
    expect(result.error.message).toMatch(new RegExp(`memory document ${raw._id} in MongoDB is malformed \\(.*embedding: must be BSON Binary`));
    expect(() => parseMemory(storedFact({ embedding: new Binary(new Uint8Array(3)) }))).toThrow(/embedding: must hold a whole/);
  });

  it('ids are deterministic per namespace and identity, and differ across namespaces', () => {
    const a = namespaceKey({ tenant: 'acme', user: 'ana' });
    const b = namespaceKey({ tenant: 'acme', user: 'ana', project: 'x' });
    expect(memoryIdFor(a, { kind: 'fact', key: 'user|name' })).toBe(memoryIdFor(a, { kind: 'fact', key: 'user|name' }));
    expect(memoryIdFor(a, { kind: 'fact', key: 'user|name' })).not.toBe(memoryIdFor(b, { kind: 'fact', key: 'user|name' }));
    expect(namespaceKey({ tenant: 'a/b', user: 'c' })).not.toBe(namespaceKey({ tenant: 'a', user: 'b/c' }));
  });
});

describe('extraction output', () => {
  it('parses the envelope and counts candidates of the wrong shape as malformed', () => {
    const parsed = parseExtractionOutput(
      '```json\n' +
        JSON.stringify({ candidates: [{ kind: 'fact', subject: 'user', predicate: 'name', value: 'Ana', text: 'x', sourceMessageIndex: 0 }, { kind: 'opinion', text: 'x' }] }) +
        '\n```',
    );
    expect(parsed.total).toBe(2);
    expect(parsed.candidates).toHaveLength(1);
    expect(parsed.malformed).toBe(1);
  });

  it.each([null, '', 'I found nothing to remember.', '{"memories": []}'])('an unusable answer (%p) is a retryable ModelOutputInvalid failure', (content) => {
    let error: unknown;
    try {
      parseExtractionOutput(content);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ApplicationFailure);
    expect((error as ApplicationFailure).type).toBe('ModelOutputInvalid');
    expect((error as ApplicationFailure).nonRetryable).toBe(false);
  });
});

describe('memory configuration', () => {
  const base = { OPENAI_BASE_URL: 'http://127.0.0.1:9999/v1' };

  it('has documented defaults', () => {
    expect(loadConfig(base).memory).toEqual(defaultMemoryConfig());
    expect(defaultMemoryConfig()).toMatchObject({ enabled: true, ttlFactDays: 365, ttlPreferenceDays: 730, ttlIntentDays: 14, extractEveryTurns: 5, citationCheck: true });
    expect(defaultMemoryConfig().strongThreshold).toBeUndefined();
  });

  it('reads every memory field from the environment', () => {
    const memory = loadConfig({
      ...base,
      MEMORY_ENABLED: 'false',
      MEMORY_STRONG_THRESHOLD: '0.8',
      MEMORY_WEAK_THRESHOLD: '0.55',
      MEMORY_TTL_INTENT_DAYS: '7',
      MEMORY_EXTRACT_EVERY_TURNS: '3',
      MEMORY_CITATION_CHECK: 'no',
      MEMORY_MAX_STRONG: '4',
      MEMORY_MAX_WEAK_CHARS: '300',
    }).memory;
    expect(memory).toMatchObject({ enabled: false, strongThreshold: 0.8, weakThreshold: 0.55, ttlIntentDays: 7, extractEveryTurns: 3, citationCheck: false, maxStrong: 4, maxWeakChars: 300 });
  });

  it('names invalid memory fields and a weak threshold above the strong one', () => {
    expect(() => loadConfig({ ...base, MEMORY_ENABLED: 'sometimes', MEMORY_TTL_FACT_DAYS: '0' })).toThrow(/memory\.enabled \(MEMORY_ENABLED\)[\s\S]*memory\.ttlFactDays \(MEMORY_TTL_FACT_DAYS\)/);
    expect(() => loadConfig({ ...base, MEMORY_STRONG_THRESHOLD: '0.5', MEMORY_WEAK_THRESHOLD: '0.6' })).toThrow(/memory\.weakThreshold \(MEMORY_WEAK_THRESHOLD\): is above memory\.strongThreshold/);
  });
});
