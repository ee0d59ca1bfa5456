/**
 * A deterministic, dependency-free text embedding: hashed bag of words plus
 * character trigrams. It knows nothing of meaning, only of shared words and
 * word fragments, which is enough for tests, benchmarks and an offline demo
 * to rank "the same topic, reworded" above "something else".
 *
 * Pure on purpose: no Node imports and no globals beyond the language, so
 * the runtime's offline embedder can reuse it anywhere.
 */

const WORD_WEIGHT = 1;
// A word of n letters yields n trigrams (with boundary marks), so each
// trigram weighs less or spelling would drown out whole-word overlap.
const TRIGRAM_WEIGHT = 0.4;
// Text without a single word still gets a unit vector: vector stores such as
// Atlas Search refuse zero vectors under cosine similarity.
const EMPTY_TOKEN = 'e:';

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

export function offlineEmbedding(text: string, dims = 256): number[] {
  if (!Number.isInteger(dims) || dims < 1) {
    throw new RangeError(`offlineEmbedding: dims must be a positive integer, got ${dims}`);
  }
  const vector = new Array<number>(dims).fill(0);
  const words = text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  if (words.length === 0) addFeature(vector, EMPTY_TOKEN, 1);
  for (const word of words) {
    addFeature(vector, `w:${word}`, WORD_WEIGHT);
    const marked = Array.from(`^${word}$`);
    for (let i = 0; i + 3 <= marked.length; i++) {
      addFeature(vector, `t:${marked.slice(i, i + 3).join('')}`, TRIGRAM_WEIGHT);
    }
  }
  const norm = Math.sqrt(vector.reduce((sum, x) => sum + x * x, 0));
  // Opposite-signed collisions can cancel exactly; fall back to the empty vector then.
  if (norm === 0) return offlineEmbedding('', dims);
  return vector.map((x) => x / norm);
}

function addFeature(vector: number[], token: string, weight: number): void {
  const hash = fnv1a32(token);
  const index = hash % vector.length;
  // The top bit picks the sign so collisions tend to cancel rather than pile up.
  const sign = hash >>> 31 === 1 ? -1 : 1;
  vector[index] = (vector[index] ?? 0) + sign * weight;
}

/** FNV-1a, 32-bit, over the UTF-8 bytes of `text`; returns an unsigned integer. */
export function fnv1a32(text: string): number {
  let hash = FNV_OFFSET;
  for (const byte of utf8Bytes(text)) {
    hash ^= byte;
    hash = Math.imul(hash, FNV_PRIME);
  }
  return hash >>> 0;
}

function* utf8Bytes(text: string): Generator<number> {
  for (const char of text) {
    const cp = char.codePointAt(0) ?? 0;
    if (cp < 0x80) {
      yield cp;
    } else if (cp < 0x800) {
      yield 0xc0 | (cp >> 6);
      yield 0x80 | (cp & 0x3f);
    } else if (cp < 0x10000) {
      yield 0xe0 | (cp >> 12);
      yield 0x80 | ((cp >> 6) & 0x3f);
      yield 0x80 | (cp & 0x3f);
    } else {
      yield 0xf0 | (cp >> 18);
      yield 0x80 | ((cp >> 12) & 0x3f);
      yield 0x80 | ((cp >> 6) & 0x3f);
      yield 0x80 | (cp & 0x3f);
    }
  }
}
