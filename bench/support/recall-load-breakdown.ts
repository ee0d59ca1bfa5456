import { BSON, type Db } from 'mongodb';
import { MEMORIES_COLLECTION, MEMORY_RECALL_COPIES_COLLECTION, type ScopedMemories } from '../../activities/memory/memory-repository';
import { tryParseMemory } from '../../activities/memory/memory-types';
import { unitVector } from '../../activities/memory/recall';
import { decodeRecallCopy } from '../../activities/memory/recall-copy';
import { round } from './stats';

async function timed<T>(run: () => T | Promise<T>): Promise<[T, number]> {
  const started = performance.now();
  const value = await run();
  return [value, round(performance.now() - started, 1)];
}

/**
 * Where a full read of a namespace goes, step by step, as the cache's full
 * read does it (`ScopedMemories.loadActive`, then one `RecallEntry` each):
 * the server's scan alone (a filter that matches nothing), the scan with the
 * namespace's documents sent, BSON decoding, schema parsing, unit vectors.
 */
export async function fullReadBreakdown(db: Db, scope: ScopedMemories, now: Date) {
  const memories = db.collection(MEMORIES_COLLECTION);
  const [, generation_ms] = await timed(() => scope.generation());
  const [, scan_only_ms] = await timed(() => memories.find({ ns: '(no such namespace)', status: 'active', expiresAt: { $gt: now } }).toArray());
  // The filter of loadActive; raw, so decoding is timed on its own.
  const [raw, fetch_ms] = await timed(() => memories.find({ ns: scope.nsKey, status: 'active', expiresAt: { $gt: now } }, { raw: true }).toArray() as unknown as Promise<Uint8Array[]>);
  const [docs, bson_decode_ms] = await timed(() => raw.map((b) => BSON.deserialize(b)));
  const [parsed, parse_ms] = await timed(() => docs.map((d) => tryParseMemory(d)));
  const [, unit_vectors_ms] = await timed(() => parsed.map((p) => (p.ok ? unitVector(p.value.embedding) : undefined)));
  return { documents: raw.length, bytes: raw.reduce((sum, b) => sum + b.byteLength, 0), generation_ms, scan_only_ms, fetch_ms, bson_decode_ms, parse_ms, unit_vectors_ms };
}

/** The same for the stored copy: one `_id` lookup, BSON decoding, the copy's own decoding. */
export async function copyReadBreakdown(db: Db, scope: ScopedMemories) {
  const copies = db.collection<{ _id: string }>(MEMORY_RECALL_COPIES_COLLECTION);
  const [, generation_ms] = await timed(() => scope.generation());
  const [raw, fetch_ms] = await timed(() => copies.findOne({ _id: scope.nsKey }, { raw: true }) as unknown as Promise<Uint8Array | null>);
  if (!raw) throw new Error(`no recall copy stored for ${scope.nsKey}`);
  const [doc, bson_decode_ms] = await timed(() => BSON.deserialize(raw));
  const [copy, copy_decode_ms] = await timed(() => decodeRecallCopy(doc));
  return { entries: copy.entries.length, bytes: raw.byteLength, generation_ms, fetch_ms, bson_decode_ms, copy_decode_ms };
}
