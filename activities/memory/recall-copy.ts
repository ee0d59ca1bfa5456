import { endianness } from 'node:os';
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { Binary } from 'mongodb';
import { MAX_TEXT_CHARS, MemoryDocError, MemoryKind } from './memory-types';
import type { RecallEntry } from './recall-cache';
import { unitVector } from './recall';

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
 * - `vectors`: the unit vectors, little-endian, in entry order within each
 *   part: the float32 scale of every dense vector, the float32 non-zero
 *   values of every sparse vector, their uint16 indices, then the int8
 *   components of every dense vector from its first non-zero component to
 *   its last (its span; the rest are 0: an embedder of two models fills only
 *   one model's place, routed-embedder.ts). An entry is sparse when that is
 *   smaller than its span as float32 (the offline embedder's hashed features
 *   are). A dense vector (an
 *   embedding model's) is held by recall itself as int8 components times one
 *   scale (`recallUnit`), from a full read as from a copy, so a recall from
 *   the copy gives exactly what a recall from a full read gives; at a
 *   quarter of the float32 size, FerretDB (about 60 ms per MB read here)
 *   returns a copy of 2,000 384-dimension vectors in a quarter of the time.
 * `entries` is raw-deflated (level 1), and `vectors` too when that pays
 * (`vectorsDeflated`): both come out about 4x smaller for the offline
 * embedder, which FerretDB then decodes 4x faster, for about 1 ms of inflating.
 */

/** Changed whenever the layout changes; a copy of another format is ignored and replaced by the next full read. */
export const RECALL_COPY_FORMAT = 4;
/** MongoDB and FerretDB refuse documents over 16 MiB; a larger recall set is not copied (its namespace is read in full). */
export const MAX_RECALL_COPY_BYTES = 15 * 1024 * 1024;
// Sparse indices are uint16; the configured embedding size is at most 8,192.
const MAX_DIMS = 65_535;
const LITTLE_ENDIAN = endianness() === 'LE';
// Inflated parts larger than this are refused (a stored copy is data to parse, not to trust).
const MAX_INFLATED_BYTES = 128 * 1024 * 1024;

/** A namespace's recall set as recall holds it. */
export interface RecallCopy {
  generation: number;
  /** When the full read this copy descends from began (ms since the epoch); patches keep it. */
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
  vectorsDeflated: boolean;
}

/** A stored copy that cannot be used; recall reads the namespace in full instead. */
export class RecallCopyError extends Error {
  override readonly name = 'RecallCopyError';
}

/**
 * id, kind, text, weight, origin, createdAt, updatedAt, expiresAt (epoch ms),
 * embedder index, dims, stored components, and where a dense vector's stored
 * span starts (-1: the vector is sparse).
 */
type EntryTuple = [string, MemoryKind, string, number, 'user' | 'tool_confirmed', number, number, number, number, number, number, number];

// The shape of MemoryId (memory-types.ts).
const MEMORY_ID = /^mem_[0-9a-f]{24}$/;
const KINDS: ReadonlySet<unknown> = new Set(MemoryKind.options);
const isInt = (v: unknown, min: number, max = Number.MAX_SAFE_INTEGER): v is number => Number.isInteger(v) && (v as number) >= min && (v as number) <= max;

const isDate = (v: unknown): boolean => isInt(v, -8.64e15, 8.64e15);

/** What is wrong with one entry, if anything. */
function entryProblem(t: unknown[]): string | undefined {
  if (t.length !== 12) return 'is not an array of 12 values';
  if (typeof t[0] !== 'string' || !MEMORY_ID.test(t[0])) return 'has a bad id';
  if (!KINDS.has(t[1])) return 'has a bad kind';
  if (typeof t[2] !== 'string' || t[2].length < 1 || t[2].length > MAX_TEXT_CHARS) return 'has a bad text';
  if (typeof t[3] !== 'number' || !(t[3] >= 1) || !Number.isFinite(t[3])) return 'has a bad weight';
  if (t[4] !== 'user' && t[4] !== 'tool_confirmed') return 'has a bad origin';
  if (!isDate(t[5]) || !isDate(t[6]) || !isDate(t[7])) return 'has a bad date';
  if (!isInt(t[8], 0) || !isInt(t[9], 0, MAX_DIMS) || !isInt(t[10], 0, t[9] as number) || !isInt(t[11], -1, (t[9] as number) - (t[10] as number))) return 'has a bad vector layout';
  return undefined;
}

/**
 * The entries, checked by hand: a schema library took 30 to 130 ms for 2,000
 * tuples on a cold process, as much as the rest of a cold recall; this loop
 * takes a few. The document and the body around the entries are checked the
 * same way, which also spares the schema compilation a first parse pays.
 */
function entryTuples(raw: unknown[]): EntryTuple[] {
  for (let n = 0; n < raw.length; n++) {
    const t = raw[n];
    const problem = Array.isArray(t) ? entryProblem(t) : 'is not an array';
    if (problem) throw new RecallCopyError(`recall copy: entry #${n} ${problem}`);
  }
  return raw as EntryTuple[];
}

interface CopyBody {
  embedders: string[];
  entries: unknown[];
  /** Documents the full read found malformed: id, fields, detail. Recall reports them as it would after a full read. */
  malformed: Array<[string, string[], string]>;
}

const isStrings = (v: unknown): v is string[] => Array.isArray(v) && v.every((s) => typeof s === 'string' && s.length > 0);

/** The stored document's own fields, checked by hand like the entries. */
function storedCopy(raw: unknown): StoredRecallCopy {
  const d = raw as Partial<Record<keyof StoredRecallCopy, unknown>> | null;
  const problem =
    typeof d !== 'object' || d === null
      ? 'is not a document'
      : d.format !== RECALL_COPY_FORMAT
        ? `has format ${String(d.format)}, not ${RECALL_COPY_FORMAT}`
        : !isInt(d.generation, 1) || !isInt(d.count, 0)
          ? 'has no generation or count'
          : !(d.loadedAt instanceof Date) || !(d.savedAt instanceof Date)
            ? 'has no dates'
            : !(d.entries instanceof Binary) || !(d.vectors instanceof Binary) || typeof d.vectorsDeflated !== 'boolean'
              ? 'has no binary parts'
              : undefined;
  if (problem) throw new RecallCopyError(`recall copy: the document ${problem}`);
  return d as StoredRecallCopy;
}

function copyBody(json: unknown): CopyBody {
  const b = json as Partial<Record<keyof CopyBody, unknown>> | null;
  if (typeof b !== 'object' || b === null || !isStrings(b.embedders) || !Array.isArray(b.entries) || !Array.isArray(b.malformed)) {
    throw new RecallCopyError('recall copy: entries are not { embedders, entries, malformed }');
  }
  for (const m of b.malformed as unknown[]) {
    if (!Array.isArray(m) || m.length !== 3 || typeof m[0] !== 'string' || !Array.isArray(m[1]) || !m[1].every((f) => typeof f === 'string') || typeof m[2] !== 'string') {
      throw new RecallCopyError('recall copy: a malformed-document note is not [id, fields, detail]');
    }
  }
  return b as CopyBody;
}

const bytesOf = (b: Binary): Uint8Array => b.buffer.subarray(0, b.position);

function inflate(binary: Binary, field: string): Buffer {
  try {
    return inflateRawSync(bytesOf(binary), { maxOutputLength: MAX_INFLATED_BYTES });
  } catch (err) {
    throw new RecallCopyError(`recall copy: ${field} do not inflate (${err instanceof Error ? err.message : String(err)})`);
  }
}

/**
 * A memory's embedding as recall holds it: scaled to length 1 and, when
 * dense, rounded to int8 components times one float32 scale (the largest
 * component is 127 scales). Cosine scores move by about a thousandth; the
 * thresholds are calibrated on these vectors (bench/memory-thresholds.ts
 * ranks through recall). Sparse vectors (smaller as non-zero values and
 * indices than their span of float32: the offline embedder's) stay float32.
 */
export function recallUnit(embedding: ArrayLike<number>): { unit: Float32Array; scale?: number } {
  const unit = unitVector(embedding);
  if (isSparse(unit)) return { unit };
  let max = 0;
  for (let i = 0; i < unit.length; i++) max = Math.max(max, Math.abs(unit[i] as number));
  const scale = Math.fround(max / 127);
  if (scale === 0) return { unit, scale: 0 };
  // `+ 0` turns a rounded -0 into 0, which the int8 copy gives back.
  for (let i = 0; i < unit.length; i++) unit[i] = (Math.max(-127, Math.min(127, Math.round((unit[i] as number) / scale))) + 0) * scale;
  return { unit, scale };
}

/** A vector's non-zero components, and its span: from the first non-zero component to the last. */
function layoutOf(v: Float32Array): { nonZero: number; start: number; span: number } {
  let nonZero = 0;
  let first = -1;
  let last = -1;
  for (let i = 0; i < v.length; i++) {
    if (v[i] === 0) continue;
    nonZero++;
    if (first < 0) first = i;
    last = i;
  }
  return first < 0 ? { nonZero: 0, start: 0, span: 0 } : { nonZero, start: first, span: last - first + 1 };
}

/** Whether a vector is smaller as its non-zero values and their indices than as its span of float32. */
function isSparse(v: Float32Array): boolean {
  const { nonZero, span } = layoutOf(v);
  return nonZero * 6 < span * 4;
}

/** The document for a recall set; null when it would be too large to store. */
export function encodeRecallCopy(copy: RecallCopy, savedAt: Date): StoredRecallCopy | null {
  const embedders: string[] = [];
  const embedderIndex = new Map<string, number>();
  const tuples: EntryTuple[] = [];
  let values = 0;
  let indices = 0;
  let denseCount = 0;
  let denseValues = 0;
  // Dense vectors as stored: rounded (`recallUnit`) when recall did not round them itself, and their span.
  const dense: Array<{ unit: Float32Array; scale: number; start: number } | undefined> = new Array(copy.entries.length);
  copy.entries.forEach((e, n) => {
    let index = embedderIndex.get(e.embedderId);
    if (index === undefined) {
      index = embedders.push(e.embedderId) - 1;
      embedderIndex.set(e.embedderId, index);
    }
    const rounded = e.scale !== undefined ? { unit: e.unit, scale: e.scale } : isSparse(e.unit) ? undefined : recallUnit(e.unit);
    const layout = layoutOf(rounded?.unit ?? e.unit);
    if (rounded) {
      dense[n] = { unit: rounded.unit, scale: rounded.scale ?? 0, start: layout.start };
      denseCount += 1;
      denseValues += layout.span;
    } else {
      values += layout.nonZero;
      indices += layout.nonZero;
    }
    const stored = rounded ? layout.span : layout.nonZero;
    tuples.push([e.id, e.kind, e.text, e.weight, e.origin, e.createdAt.getTime(), e.updatedAt.getTime(), e.expiresAt.getTime(), index, e.unit.length, stored, rounded ? layout.start : -1]);
  });
  const json = Buffer.from(JSON.stringify({ embedders, entries: tuples, malformed: copy.malformed.map((m) => [m.memoryId, m.fields, m.detail]) }), 'utf8');
  const scales = new Float32Array(denseCount);
  const valueArray = new Float32Array(values);
  const indexArray = new Uint16Array(indices);
  const components = new Int8Array(denseValues);
  let scaleAt = 0;
  let componentAt = 0;
  let valueAt = 0;
  let indexAt = 0;
  copy.entries.forEach((e, n) => {
    const d = dense[n];
    if (d) {
      const span = (tuples[n] as EntryTuple)[10];
      scales[scaleAt++] = d.scale;
      for (let i = d.start; i < d.start + span; i++) components[componentAt++] = d.scale === 0 ? 0 : Math.round((d.unit[i] as number) / d.scale);
      return;
    }
    for (let i = 0; i < e.unit.length; i++) {
      if (e.unit[i] === 0) continue;
      valueArray[valueAt++] = e.unit[i] as number;
      indexArray[indexAt++] = i;
    }
  });
  const vectors = littleEndianBytes(scales, valueArray, indexArray, components);
  const entries = deflateRawSync(json, { level: 1 });
  const vectorsDeflated = worthDeflating(vectors);
  const vectorBytes = vectorsDeflated ? deflateRawSync(vectors, { level: 1 }) : vectors;
  if (entries.byteLength + vectorBytes.byteLength > MAX_RECALL_COPY_BYTES) return null;
  return {
    format: RECALL_COPY_FORMAT,
    generation: copy.generation,
    loadedAt: new Date(copy.loadedAt),
    savedAt,
    count: copy.entries.length,
    entries: new Binary(entries),
    vectors: new Binary(vectorBytes),
    vectorsDeflated,
  };
}

/**
 * Whether deflating pays: the offline embedder's vectors shrink about 4x,
 * dense vectors of an embedding model by a tenth, for 400 ms per 12 MB. A
 * 64 KB sample decides.
 */
function worthDeflating(bytes: Uint8Array): boolean {
  const sample = bytes.subarray(0, 64 * 1024);
  return sample.byteLength > 0 && deflateRawSync(sample, { level: 1 }).byteLength < sample.byteLength * 0.75;
}

/** The scales, the sparse values, their indices and the dense components, little-endian whatever the platform. */
function littleEndianBytes(scales: Float32Array, values: Float32Array, indices: Uint16Array, components: Int8Array): Uint8Array {
  const out = new Uint8Array(scales.byteLength + values.byteLength + indices.byteLength + components.byteLength);
  const view = new DataView(out.buffer);
  let at = 0;
  for (const floats of [scales, values]) {
    if (LITTLE_ENDIAN) out.set(new Uint8Array(floats.buffer, floats.byteOffset, floats.byteLength), at);
    else floats.forEach((v, i) => view.setFloat32(at + i * 4, v, true));
    at += floats.byteLength;
  }
  if (LITTLE_ENDIAN) out.set(new Uint8Array(indices.buffer, indices.byteOffset, indices.byteLength), at);
  else indices.forEach((v, i) => view.setUint16(at + i * 2, v, true));
  at += indices.byteLength;
  out.set(new Uint8Array(components.buffer, components.byteOffset, components.byteLength), at);
  return out;
}

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
  const doc = storedCopy(raw);
  let json: unknown;
  try {
    json = JSON.parse(inflate(doc.entries, 'entries').toString('utf8'));
  } catch (err) {
    if (err instanceof RecallCopyError) throw err;
    throw new RecallCopyError('recall copy: entries are not JSON');
  }
  const { embedders, entries: rawEntries, malformed } = copyBody(json);
  const tuples = entryTuples(rawEntries);
  if (tuples.length !== doc.count) throw new RecallCopyError(`recall copy: ${tuples.length} entries where count says ${doc.count}`);

  let denseCount = 0;
  let componentCount = 0;
  let valueCount = 0;
  let indexCount = 0;
  for (const t of tuples) {
    if (t[11] >= 0) {
      denseCount += 1;
      componentCount += t[10];
    } else {
      valueCount += t[10];
      indexCount += t[10];
    }
  }
  const bytes = doc.vectorsDeflated ? inflate(doc.vectors, 'vectors') : bytesOf(doc.vectors);
  const need = denseCount * 4 + valueCount * 4 + indexCount * 2 + componentCount;
  if (bytes.byteLength !== need) throw new RecallCopyError(`recall copy: ${bytes.byteLength} bytes of vectors where the entries need ${need}`);
  const scales = float32s(bytes, 0, denseCount);
  const values = float32s(bytes, denseCount * 4, valueCount);
  const indices = uint16s(bytes, denseCount * 4 + valueCount * 4, indexCount);
  const components = new Int8Array(alignedCopy(bytes, denseCount * 4 + valueCount * 4 + indexCount * 2, componentCount));
  // One buffer for all the vectors, one view per entry: far cheaper than an array each.
  let allDims = 0;
  for (const t of tuples) allDims += t[9];
  const expanded = new Float32Array(allDims);
  let expandedAt = 0;
  let scaleAt = 0;
  let componentAt = 0;
  let valueAt = 0;
  let indexAt = 0;
  // x - x is 0 for every finite x and NaN otherwise: summed over every value as it is copied, cheaper than a call per value.
  let check = 0;
  // Index access, not destructuring: on a cold process destructuring runs the iterator protocol per tuple.
  const entries: RecallEntry[] = new Array(tuples.length);
  for (let n = 0; n < tuples.length; n++) {
    const t = tuples[n] as EntryTuple;
    const dims = t[9];
    const stored = t[10];
    const embedderId = embedders[t[8]];
    if (embedderId === undefined) throw new RecallCopyError(`recall copy: entry ${t[0]} names embedder #${t[8]} of ${embedders.length}`);
    const unit = expanded.subarray(expandedAt, expandedAt + dims);
    expandedAt += dims;
    let scale: number | undefined;
    const start = t[11];
    if (start >= 0) {
      // The components outside the span are 0, as `expanded` starts.
      scale = scales[scaleAt++] as number;
      check += scale - scale;
      for (let k = 0; k < stored; k++) unit[start + k] = (components[componentAt + k] as number) * scale;
      componentAt += stored;
    } else {
      for (let k = 0; k < stored; k++) {
        const index = indices[indexAt + k] as number;
        if (index >= dims) throw new RecallCopyError(`recall copy: the vector of ${t[0]} has a component past its ${dims} dimensions`);
        const value = values[valueAt + k] as number;
        check += value - value;
        unit[index] = value;
      }
      indexAt += stored;
      valueAt += stored;
    }
    entries[n] = {
      id: t[0],
      kind: t[1],
      text: t[2],
      unit,
      ...(scale === undefined ? {} : { scale }),
      embedderId,
      weight: t[3],
      origin: t[4],
      createdAt: new Date(t[5]),
      updatedAt: new Date(t[6]),
      expiresAt: new Date(t[7]),
    };
  }
  if (check !== 0) throw new RecallCopyError('recall copy: a vector value is not a number');
  return {
    generation: doc.generation,
    loadedAt: doc.loadedAt.getTime(),
    entries,
    malformed: malformed.map(([id, fields, detail]) => new MemoryDocError(id, fields, detail)),
  };
}
