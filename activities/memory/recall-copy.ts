import { endianness } from 'node:os';
import { Binary } from 'mongodb';
import { z } from 'zod';
import { MAX_TEXT_CHARS, MemoryDocError, MemoryKind } from './memory-types';
import type { RecallEntry } from './recall-cache';

/**
 * A namespace's recall set as one MongoDB document, so a worker that has no
 * copy yet (just started, or evicted it) loads it with one `_id` lookup
 * instead of reading the namespace's memories. On FerretDB only an `_id`
 * equality is answered from an index; any other filter decodes every document
 * of the collection, which took seconds for 6,900 memories.
 *
 * The copy is derived data: it carries the namespace generation it is
 * current for and the time of the full read it descends from, and recall
 * uses it only when that generation is still the namespace's generation.
 *
 * Layout, chosen for the cost of decoding on both ends (FerretDB stores a
 * document as JSON and decodes all of it on every read; one binary field is a
 * single base64 string to it, thousands of subdocuments are not):
 * - `entries`: UTF-8 JSON `{ embedders, entries, malformed }`, one tuple per
 *   memory (see `EntryTuple`), dates as epoch milliseconds;
 * - `vectors`: the unit vectors, little-endian: first the float32 values of
 *   every entry in entry order (all `dims` of a dense vector, the non-zero
 *   ones of a sparse vector), then the uint16 indices of the sparse ones.
 *   An entry is sparse when that is smaller (the offline embedder's hashed
 *   features are); decoding is then two typed-array views and a copy each.
 *   The values are the float32 values recall scores with, so a recall from
 *   the copy gives exactly what a recall from a full read gives.
 */

/** Changed whenever the layout changes; a copy of another format is ignored and replaced by the next full read. */
export const RECALL_COPY_FORMAT = 1;
/** MongoDB and FerretDB refuse documents over 16 MiB; a larger recall set is not copied (its namespace is read in full). */
export const MAX_RECALL_COPY_BYTES = 15 * 1024 * 1024;
// Sparse indices are uint16; the configured embedding size is at most 8,192.
const MAX_DIMS = 65_535;

/** A namespace's recall set as recall holds it. */
export interface RecallCopy {
  generation: number;
  /** When the full read this copy descends from began (ms since the epoch). */
  loadedAt: number;
  entries: RecallEntry[];
  malformed: MemoryDocError[];
}

/** The stored document, without its `_id` (the namespace key, set by the repository). */
export interface StoredRecallCopy {
  format: number;
  generation: number;
  loadedAt: Date;
  savedAt: Date;
  count: number;
  entries: Binary;
  vectors: Binary;
}

/** A stored copy that cannot be used; recall reads the namespace in full instead. */
export class RecallCopyError extends Error {
  override readonly name = 'RecallCopyError';
}

/** id, kind, text, weight, origin, createdAt, updatedAt, expiresAt (epoch ms), embedder index, dims, stored components. */
type EntryTuple = [string, MemoryKind, string, number, 'user' | 'tool_confirmed', number, number, number, number, number, number];

// The shape of MemoryId (memory-types.ts).
const MEMORY_ID = /^mem_[0-9a-f]{24}$/;
const KINDS: ReadonlySet<unknown> = new Set(MemoryKind.options);
const isInt = (v: unknown, min: number, max = Number.MAX_SAFE_INTEGER): v is number => Number.isInteger(v) && (v as number) >= min && (v as number) <= max;

/**
 * One entry, checked by hand: a schema library took 30 to 130 ms for 2,000
 * tuples, as much as the rest of a cold recall; this loop takes about 1 ms.
 */
function entryTuple(raw: unknown, n: number): EntryTuple {
  const problem = ((): string | undefined => {
    if (!Array.isArray(raw) || raw.length !== 11) return 'is not an array of 11 values';
    const [id, kind, text, weight, origin, createdAt, updatedAt, expiresAt, embedder, dims, stored] = raw as unknown[];
    if (typeof id !== 'string' || !MEMORY_ID.test(id)) return 'has a bad id';
    if (!KINDS.has(kind)) return 'has a bad kind';
    if (typeof text !== 'string' || text.length < 1 || text.length > MAX_TEXT_CHARS) return 'has a bad text';
    if (typeof weight !== 'number' || !(weight >= 1) || !Number.isFinite(weight)) return 'has a bad weight';
    if (origin !== 'user' && origin !== 'tool_confirmed') return 'has a bad origin';
    if (![createdAt, updatedAt, expiresAt].every((t) => isInt(t, -8.64e15, 8.64e15))) return 'has a bad date';
    if (!isInt(embedder, 0) || !isInt(dims, 0, MAX_DIMS) || !isInt(stored, 0, dims)) return 'has a bad vector layout';
    return undefined;
  })();
  if (problem) throw new RecallCopyError(`recall copy: entry #${n} ${problem}`);
  return raw as EntryTuple;
}

const CopyBody = z.object({
  embedders: z.array(z.string().min(1)),
  entries: z.array(z.unknown()),
  /** Documents the full read found malformed: id, fields, detail. Recall reports them as it would after a full read. */
  malformed: z.array(z.tuple([z.string(), z.array(z.string()), z.string()])),
});

const StoredCopy = z.object({
  format: z.literal(RECALL_COPY_FORMAT),
  generation: z.number().int().min(1),
  loadedAt: z.date(),
  savedAt: z.date(),
  count: z.number().int().min(0),
  entries: z.instanceof(Binary),
  vectors: z.instanceof(Binary),
});

const bytesOf = (b: Binary): Uint8Array => b.buffer.subarray(0, b.position);

/** Non-zero components of a vector, or -1 when storing it dense is not larger. */
function sparseCount(v: Float32Array): number {
  let nonZero = 0;
  for (let i = 0; i < v.length; i++) if (v[i] !== 0) nonZero++;
  return nonZero * 6 < v.length * 4 ? nonZero : -1;
}

/** The document for a recall set; null when it would be too large to store. */
export function encodeRecallCopy(copy: RecallCopy, savedAt: Date): StoredRecallCopy | null {
  const embedders: string[] = [];
  const embedderIndex = new Map<string, number>();
  const tuples: EntryTuple[] = [];
  let values = 0;
  let indices = 0;
  for (const e of copy.entries) {
    let index = embedderIndex.get(e.embedderId);
    if (index === undefined) {
      index = embedders.push(e.embedderId) - 1;
      embedderIndex.set(e.embedderId, index);
    }
    const sparse = sparseCount(e.unit);
    const stored = sparse < 0 ? e.unit.length : sparse;
    values += stored;
    if (sparse >= 0) indices += stored;
    tuples.push([e.id, e.kind, e.text, e.weight, e.origin, e.createdAt.getTime(), e.updatedAt.getTime(), e.expiresAt.getTime(), index, e.unit.length, stored]);
  }
  const json = Buffer.from(JSON.stringify({ embedders, entries: tuples, malformed: copy.malformed.map((m) => [m.memoryId, m.fields, m.detail]) }), 'utf8');
  if (json.byteLength + values * 4 + indices * 2 > MAX_RECALL_COPY_BYTES) return null;

  const vectors = new Uint8Array(values * 4 + indices * 2);
  const view = new DataView(vectors.buffer);
  let valueAt = 0;
  let indexAt = values * 4;
  copy.entries.forEach((e, n) => {
    const dense = tuples[n]?.[10] === e.unit.length;
    for (let i = 0; i < e.unit.length; i++) {
      const value = e.unit[i] as number;
      if (!dense && value === 0) continue;
      view.setFloat32(valueAt, value, true);
      valueAt += 4;
      if (dense) continue;
      view.setUint16(indexAt, i, true);
      indexAt += 2;
    }
  });
  return {
    format: RECALL_COPY_FORMAT,
    generation: copy.generation,
    loadedAt: new Date(copy.loadedAt),
    savedAt,
    count: copy.entries.length,
    entries: new Binary(json),
    vectors: new Binary(vectors),
  };
}

const LITTLE_ENDIAN = endianness() === 'LE';

/**
 * The bytes in a buffer of their own: typed-array views need an aligned
 * offset, and a BSON Binary sits anywhere in its message (a Node Buffer's
 * `slice` would not copy).
 */
function alignedCopy(bytes: Uint8Array, offset: number, length: number): ArrayBuffer {
  const out = new Uint8Array(length);
  out.set(bytes.subarray(offset, offset + length));
  return out.buffer;
}

/** `count` little-endian float32 values from `offset`, in an array of their own. */
function float32s(bytes: Uint8Array, offset: number, count: number): Float32Array {
  if (LITTLE_ENDIAN) return new Float32Array(alignedCopy(bytes, offset, count * 4));
  const view = new DataView(bytes.buffer, bytes.byteOffset + offset, count * 4);
  return Float32Array.from({ length: count }, (_, i) => view.getFloat32(i * 4, true));
}

function uint16s(bytes: Uint8Array, offset: number, count: number): Uint16Array {
  if (LITTLE_ENDIAN) return new Uint16Array(alignedCopy(bytes, offset, count * 2));
  const view = new DataView(bytes.buffer, bytes.byteOffset + offset, count * 2);
  return Uint16Array.from({ length: count }, (_, i) => view.getUint16(i * 2, true));
}

/** Parses a stored copy; throws a `RecallCopyError` saying what is wrong with it. */
export function decodeRecallCopy(raw: unknown): RecallCopy {
  const doc = StoredCopy.safeParse(raw);
  if (!doc.success) throw new RecallCopyError(`recall copy: ${doc.error.issues.map((i) => `${i.path.join('.') || '(document)'}: ${i.message}`).join('; ')}`);
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(bytesOf(doc.data.entries)).toString('utf8'));
  } catch {
    throw new RecallCopyError('recall copy: entries are not JSON');
  }
  const body = CopyBody.safeParse(json);
  if (!body.success) throw new RecallCopyError(`recall copy: ${body.error.issues.slice(0, 3).map((i) => `entries.${i.path.join('.')}: ${i.message}`).join('; ')}`);
  const { embedders, malformed } = body.data;
  const tuples = body.data.entries.map(entryTuple);
  if (tuples.length !== doc.data.count) throw new RecallCopyError(`recall copy: ${tuples.length} entries where count says ${doc.data.count}`);

  let valueCount = 0;
  let indexCount = 0;
  for (const t of tuples) {
    valueCount += t[10];
    if (t[10] !== t[9]) indexCount += t[10];
  }
  const bytes = bytesOf(doc.data.vectors);
  if (bytes.byteLength !== valueCount * 4 + indexCount * 2) throw new RecallCopyError(`recall copy: ${bytes.byteLength} bytes of vectors where the entries need ${valueCount * 4 + indexCount * 2}`);
  const values = float32s(bytes, 0, valueCount);
  for (let i = 0; i < values.length; i++) if (!Number.isFinite(values[i])) throw new RecallCopyError(`recall copy: vector value #${i} is not a number`);
  const indices = uint16s(bytes, valueCount * 4, indexCount);
  // One buffer for all the sparse vectors made dense, one view per entry: far cheaper than an array each.
  let sparseDims = 0;
  for (const t of tuples) if (t[10] !== t[9]) sparseDims += t[9];
  const expanded = new Float32Array(sparseDims);
  let expandedAt = 0;
  let valueAt = 0;
  let indexAt = 0;
  const entries = tuples.map(([id, kind, text, weight, origin, createdAt, updatedAt, expiresAt, embedder, dims, stored]): RecallEntry => {
    const embedderId = embedders[embedder];
    if (embedderId === undefined) throw new RecallCopyError(`recall copy: entry ${id} names embedder #${embedder} of ${embedders.length}`);
    let unit: Float32Array;
    if (stored === dims) {
      unit = values.subarray(valueAt, valueAt + dims);
    } else {
      unit = expanded.subarray(expandedAt, expandedAt + dims);
      expandedAt += dims;
      for (let k = 0; k < stored; k++) {
        const index = indices[indexAt + k] as number;
        if (index >= dims) throw new RecallCopyError(`recall copy: the vector of ${id} has a component past its ${dims} dimensions`);
        unit[index] = values[valueAt + k] as number;
      }
      indexAt += stored;
    }
    valueAt += stored;
    return { id, kind, text, unit, embedderId, weight, origin, createdAt: new Date(createdAt), updatedAt: new Date(updatedAt), expiresAt: new Date(expiresAt) };
  });
  return {
    generation: doc.data.generation,
    loadedAt: doc.data.loadedAt.getTime(),
    entries,
    malformed: malformed.map(([id, fields, detail]) => new MemoryDocError(id, fields, detail)),
  };
}
