import { randomFillSync } from 'node:crypto';
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { Binary, BSON } from 'mongodb';
import { OfflineEmbedder } from '../../activities/memory/embedder';
import { MemoryDocError } from '../../activities/memory/memory-types';
import { queryScorer, unitVector } from '../../activities/memory/recall';
import type { RecallEntry } from '../../activities/memory/recall-cache';
import { decodeRecallCopy, encodeRecallCopy, recallUnit, RecallCopyError, type RecallCopy, type StoredRecallCopy } from '../../activities/memory/recall-copy';
import { seededRandom } from '../support/memory-fixtures';

const embedder = new OfflineEmbedder();
const at = new Date('2025-05-01T10:00:00Z');

/** An entry as recall builds it from a memory's embedding (`recallUnit`: dense vectors in int8 steps). */
function entry(n: number, embedding: ArrayLike<number>, overrides: Partial<RecallEntry> = {}): RecallEntry {
  const { unit, scale } = recallUnit(embedding);
  return {
    id: `mem_${n.toString(16).padStart(24, '0')}`,
    kind: (['fact', 'preference', 'intent'] as const)[n % 3] as RecallEntry['kind'],
    text: `The user's thing number ${n} is value ${n}.`,
    unit,
    ...(scale === undefined ? {} : { scale }),
    embedderId: embedder.id,
    weight: n % 3 === 1 ? 1 + (n % 7) : 1,
    origin: n % 5 === 0 ? 'tool_confirmed' : 'user',
    createdAt: new Date(at.getTime() - n * 60_000),
    updatedAt: new Date(at.getTime() - n * 1_000),
    expiresAt: new Date(at.getTime() + n * 86_400_000),
    ...overrides,
  };
}

/** Sparse offline vectors, dense vectors of another embedder, a zero vector and an empty one. */
function mixedCopy(): RecallCopy {
  const random = seededRandom(7);
  const entries: RecallEntry[] = [];
  for (let n = 0; n < 40; n++) entries.push(entry(n, embedder.embedOne(`The user's thing number ${n} is value ${n}.`)));
  for (let n = 40; n < 50; n++) entries.push(entry(n, Array.from({ length: 64 }, () => random() * 2 - 1), { embedderId: 'openai:text-embedding-3-small:d64' }));
  entries.push(entry(50, new Float32Array(256)), entry(51, new Float32Array(0), { embedderId: 'openai:empty' }));
  const malformed = [new MemoryDocError('mem_ffff00000000000000000000', ['embedding'], 'embedding: must be BSON Binary (little-endian float32)')];
  return { generation: 12, loadedAt: at.getTime(), entries, malformed };
}

/** Through BSON as MongoDB would hand it back: the binary fields then sit at arbitrary offsets of the message. */
function roundTrip(doc: StoredRecallCopy): unknown {
  return BSON.deserialize(BSON.serialize({ _id: 'ns', ...doc }));
}

const inflated = (b: Binary): Buffer => inflateRawSync(b.buffer.subarray(0, b.position));
const deflated = (bytes: Uint8Array): Binary => new Binary(deflateRawSync(bytes));
/** The stored vector bytes as written, and the same document with other vector bytes. */
const vectorsOf = (doc: StoredRecallCopy): Buffer => (doc.vectorsDeflated ? inflated(doc.vectors) : Buffer.from(doc.vectors.buffer.subarray(0, doc.vectors.position)));
const withVectors = (doc: StoredRecallCopy, bytes: Uint8Array): StoredRecallCopy => ({ ...doc, vectors: doc.vectorsDeflated ? deflated(bytes) : new Binary(bytes) });

function stored(copy = mixedCopy()): StoredRecallCopy {
  const doc = encodeRecallCopy(copy, at);
  if (!doc) throw new Error('the copy should fit');
  return doc;
}

describe('recall copy', () => {
  it('a recall set stored and read back is the same set, vector bits included, so scores do not change', () => {
    const copy = mixedCopy();
    const back = decodeRecallCopy(roundTrip(stored(copy)));
    expect(back.generation).toBe(12);
    expect(back.loadedAt).toBe(at.getTime());
    expect(back.entries.map(({ unit, ...rest }) => ({ ...rest, unit: [...unit] }))).toEqual(copy.entries.map(({ unit, ...rest }) => ({ ...rest, unit: [...unit] })));
    expect(back.malformed.map((e) => [e.memoryId, e.fields, e.message])).toEqual(copy.malformed.map((e) => [e.memoryId, e.fields, e.message]));
    const score = queryScorer(embedder.embedOne('What is thing number 7?'));
    expect(back.entries.map((e) => score(e.unit))).toEqual(copy.entries.map((e) => score(e.unit)));
  });

  it('stores sparse vectors as their non-zero components, far smaller than dense float32', () => {
    const copy = mixedCopy();
    const offline = copy.entries.slice(0, 40);
    const doc = stored({ ...copy, entries: offline, malformed: [] });
    expect(doc.vectorsDeflated).toBe(true);
    expect(vectorsOf(doc).byteLength).toBeLessThan((offline.length * 256 * 4) / 3);
    expect(doc.vectors.position).toBeLessThan(vectorsOf(doc).byteLength / 2);
  });

  it('stores dense vectors of an embedding model as int8 components and one scale each, a quarter of float32, bits kept', () => {
    const random = seededRandom(11);
    const dense = Array.from({ length: 50 }, (_, n) => entry(n, Array.from({ length: 1536 }, () => random() * 2 - 1), { embedderId: 'openai:text-embedding-3-small' }));
    const doc = stored({ generation: 3, loadedAt: at.getTime(), entries: dense, malformed: [] });
    expect(doc.vectorsDeflated).toBe(false);
    expect(doc.vectors.position).toBe(50 * 4 + 50 * 1536);
    const bits = (units: Float32Array[]) => Buffer.concat(units.map((u) => Buffer.from(u.buffer, u.byteOffset, u.byteLength)));
    expect(bits(decodeRecallCopy(roundTrip(doc)).entries.map((e) => e.unit)).equals(bits(dense.map((e) => e.unit)))).toBe(true);
  });

  it("stores only the span of a vector of two models' places that one model filled, and gives back exactly the rest as 0", () => {
    // As routed-embedder.ts writes them: 384 English places then 512 Chinese ones, one half filled.
    const random = seededRandom(31);
    // Components of 0.5 to 1 in size, so none rounds to 0 and each span is its model's whole place.
    const component = () => (random() < 0.5 ? -1 : 1) * (0.5 + random() / 2);
    const half = (filled: 'first' | 'second') => Array.from({ length: 896 }, (_, i) => ((i < 384) === (filled === 'first') ? component() : 0));
    const entries = Array.from({ length: 40 }, (_, n) => entry(n, half(n % 2 === 0 ? 'first' : 'second')));
    const doc = stored({ generation: 2, loadedAt: at.getTime(), entries, malformed: [] });
    const vectors = vectorsOf(doc);
    expect(vectors.byteLength).toBe(40 * 4 + 20 * 384 + 20 * 512);
    const back = decodeRecallCopy(roundTrip(doc)).entries;
    const bits = (units: Float32Array[]) => Buffer.concat(units.map((u) => Buffer.from(u.buffer, u.byteOffset, u.byteLength)));
    expect(bits(back.map((e) => e.unit)).equals(bits(entries.map((e) => e.unit)))).toBe(true);
    expect(back.every((e) => e.unit.length === 896 && e.scale !== undefined)).toBe(true);
    expect(back[1]?.unit.subarray(0, 384).every((x) => x === 0)).toBe(true);
  });

  it('rounding a dense unit vector to int8 steps moves its cosine scores by less than 0.005', () => {
    const random = seededRandom(23);
    const vector = () => Array.from({ length: 384 }, () => random() * 2 - 1);
    let worst = 0;
    for (let n = 0; n < 200; n++) {
      const memory = vector();
      const score = queryScorer(vector());
      worst = Math.max(worst, Math.abs(score(recallUnit(memory).unit) - score(unitVector(memory))));
    }
    expect(worst).toBeGreaterThan(0);
    expect(worst).toBeLessThan(0.005);
  });

  it('a set too large for one document, even deflated, is not stored', () => {
    // Random int8 steps (as recall holds dense vectors): nothing compresses, and 2,200 x 8,192 bytes is 17 MiB.
    const scale = 1 / 127;
    const steps = (): Float32Array => {
      const unit = new Float32Array(randomFillSync(new Int8Array(8192)));
      for (let i = 0; i < unit.length; i++) unit[i] = ((unit[i] as number) + 0) * scale;
      return unit;
    };
    const big = Array.from({ length: 2_200 }, (_, n) => ({ ...entry(n, []), unit: steps(), scale }));
    expect(encodeRecallCopy({ generation: 1, loadedAt: at.getTime(), entries: big, malformed: [] }, at)).toBeNull();
  });

  it('a damaged copy is refused with a reason, never used in part', () => {
    const good = stored();
    const json = (doc: StoredRecallCopy) => JSON.parse(inflated(doc.entries).toString('utf8'));
    const withBody = (edit: (body: { embedders: string[]; entries: unknown[][] }) => void): StoredRecallCopy => {
      const body = json(good);
      edit(body);
      return { ...good, entries: deflated(Buffer.from(JSON.stringify(body))) };
    };
    const damaged: Array<[string, unknown]> = [
      ['the previous format', { ...good, format: 1 }],
      ['no generation', { ...good, generation: undefined }],
      ['entries not deflated', { ...good, entries: new Binary(Buffer.from('{"embedders":[]}')) }],
      ['entries not JSON', { ...good, entries: deflated(Buffer.from('{"embedders":')) }],
      ['count disagrees', { ...good, count: good.count + 1 }],
      ['vectors cut short', withVectors(good, vectorsOf(good).subarray(2))],
      ['a bad id', withBody((b) => void ((b.entries[0] as unknown[])[0] = 'mem_xyz'))],
      ['a bad kind', withBody((b) => void ((b.entries[0] as unknown[])[1] = 'rumour'))],
      ['an unknown embedder', withBody((b) => void ((b.entries[0] as unknown[])[8] = 9))],
      ['more components than dimensions', withBody((b) => void ((b.entries[0] as unknown[])[10] = 300))],
      ['a span past the dimensions', withBody((b) => void ((b.entries[0] as unknown[])[11] = 255))],
      ['no span field', withBody((b) => void (b.entries[0] as unknown[]).pop())],
    ];
    for (const [what, doc] of damaged) {
      let error: unknown;
      try {
        decodeRecallCopy(roundTrip(doc as StoredRecallCopy));
      } catch (err) {
        error = err;
      }
      expect([what, error instanceof RecallCopyError]).toEqual([what, true]);
    }

    // A value that is not a number, or an index past the vector's dimensions, in the binary part.
    const single = stored({ generation: 1, loadedAt: at.getTime(), entries: [entry(1, unitVector(embedder.embedOne('dog Biscuit')))], malformed: [] });
    const stored1 = json(single).entries[0][10] as number;
    const nan = vectorsOf(single);
    nan.writeFloatLE(Number.NaN, 0);
    expect(() => decodeRecallCopy(roundTrip(withVectors(single, nan)))).toThrow(/not a number/);
    const pastEnd = vectorsOf(single);
    pastEnd.writeUInt16LE(256, stored1 * 4);
    expect(() => decodeRecallCopy(roundTrip(withVectors(single, pastEnd)))).toThrow(/past its 256 dimensions/);
  });
});
