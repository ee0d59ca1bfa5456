import { Binary } from 'mongodb';
import { z } from 'zod';
import { UserNamespace } from '../../workflows/session-types';

/**
 * The stored shapes of long-term memory. Every document read from MongoDB is
 * parsed with these schemas: a malformed one becomes a `MemoryDocError` that
 * names the document and the fields, never a crash deep in recall.
 */

/** Whose memories: tenant, user and optionally project. Required on every read and write. */
export const MemoryNamespace = UserNamespace;
export type MemoryNamespace = UserNamespace;

export const MemoryKind = z.enum(['fact', 'preference', 'intent']);
export type MemoryKind = z.infer<typeof MemoryKind>;

export const MemoryStatus = z.enum(['active', 'superseded', 'expired', 'deleted']);
export type MemoryStatus = z.infer<typeof MemoryStatus>;

export const PreferencePolarity = z.enum(['prefers', 'avoids']);
export type PreferencePolarity = z.infer<typeof PreferencePolarity>;

/** `mem_` and 24 hex digits of a hash over the namespace and the memory's identity. */
export const MemoryId = z.string().regex(/^mem_[0-9a-f]{24}$/, 'must be mem_ followed by 24 hex digits');

export const MAX_TEXT_CHARS = 280;

/** Where a memory came from: which session, turn and message, and whether the user said it. */
export const MemorySource = z.object({
  sessionId: z.string().min(1),
  turnId: z.string().min(1),
  /** Index of the message inside its turn's `messages`. */
  messageIndex: z.number().int().min(0),
  role: z.enum(['user', 'assistant', 'tool']),
  /** `user`: the user said it. `tool`: it came from a tool, an MCP result or the assistant, and the user confirmed it. */
  origin: z.enum(['user', 'tool']),
  toolCallId: z.string().optional(),
  /** The user message that confirmed a tool-sourced memory. */
  confirmedBy: z.object({ turnId: z.string(), messageIndex: z.number().int().min(0) }).optional(),
});
export type MemorySource = z.infer<typeof MemorySource>;

/**
 * Embeddings are stored as BSON vectors (Binary subtype 9, float32: a dtype
 * byte 0x27, a padding byte, then little-endian float32 values). That is a
 * quarter of the size of a BSON array of doubles, decodes straight into the
 * Float32Array recall scores, and is the form Atlas Vector Search indexes
 * (`vector-search.ts`). Documents written before this format hold the bare
 * little-endian bytes (subtype 0); both are read, the re-embed job rewrites
 * old ones in the new form.
 */
const StoredEmbedding = z
  .instanceof(Binary, { message: 'must be BSON Binary (float32 vector)' })
  .refine((b) => embeddingByteLength(b) > 0, 'must hold a whole, non-zero number of float32 values')
  .transform((b) => decodeEmbedding(b));

const FLOAT32_VECTOR_DTYPE = 0x27;

/** Bytes of float32 values in a stored embedding; -1 when it is neither of the two stored forms. */
function embeddingByteLength(b: Binary): number {
  if (b.sub_type === Binary.SUBTYPE_VECTOR) {
    const bytes = b.buffer.subarray(0, b.position);
    if (bytes[0] !== FLOAT32_VECTOR_DTYPE || bytes[1] !== 0 || (b.position - 2) % 4 !== 0) return -1;
    return b.position - 2;
  }
  return b.position % 4 === 0 ? b.position : -1;
}

export function encodeEmbedding(vector: ArrayLike<number>): Binary {
  const view = new DataView(new ArrayBuffer(2 + vector.length * 4));
  view.setUint8(0, FLOAT32_VECTOR_DTYPE);
  for (let i = 0; i < vector.length; i++) view.setFloat32(2 + i * 4, vector[i] ?? 0, true);
  return new Binary(new Uint8Array(view.buffer), Binary.SUBTYPE_VECTOR);
}

export function decodeEmbedding(binary: Binary): Float32Array {
  const offset = binary.sub_type === Binary.SUBTYPE_VECTOR ? 2 : 0;
  const bytes = binary.buffer.subarray(offset, binary.position);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out = new Float32Array(Math.floor(bytes.byteLength / 4));
  for (let i = 0; i < out.length; i++) out[i] = view.getFloat32(i * 4, true);
  return out;
}

// Documents are written without `project` when the namespace has none; a null
// from another writer (a driver that serialises undefined) reads the same.
const OptionalProject = z
  .string()
  .nullish()
  .transform((p) => p ?? undefined);

const BaseMemoryDoc = z.object({
  _id: MemoryId,
  /** Canonical namespace key (see `namespaceKey`); the one field every query filters on. */
  ns: z.string().min(1),
  tenant: z.string().min(1),
  user: z.string().min(1),
  project: OptionalProject,
  status: MemoryStatus,
  /** What the model reads, third person: "The user's name is Ana." */
  text: z.string().min(1).max(MAX_TEXT_CHARS),
  embedding: StoredEmbedding,
  embedderId: z.string().min(1),
  source: MemorySource,
  /** `<session>:<turn>:<message>` keys already applied, so a retried extraction changes nothing twice. */
  sourceKeys: z.array(z.string()).max(64),
  createdAt: z.date(),
  updatedAt: z.date(),
  /** When the user said what this version holds (the turn's start): an older statement never overwrites a newer one. */
  statedAt: z.date(),
  expiresAt: z.date(),
  /** Incremented by every write; writes are conditional on it (no transactions on FerretDB). */
  version: z.number().int().min(1),
  supersededBy: MemoryId.optional(),
});

export const FactDoc = BaseMemoryDoc.extend({
  kind: z.literal('fact'),
  /** `<subject>|<predicate>`, normalized: one active fact per namespace and key. */
  key: z.string().min(3),
  subject: z.string().min(1),
  predicate: z.string().min(1),
  value: z.string().min(1),
});

export const PreferenceDoc = BaseMemoryDoc.extend({
  kind: z.literal('preference'),
  /** Normalized object of the preference: "concise answers". */
  statement: z.string().min(1),
  polarity: PreferencePolarity,
  /** The one dimension it sets ("answer length"); two preferences on one topic contradict. */
  topic: z.string().min(1).optional(),
  /** Grows each time the user states it again; raises its rank in recall. */
  weight: z.number().min(1),
});

export const IntentDoc = BaseMemoryDoc.extend({
  kind: z.literal('intent'),
  statement: z.string().min(1),
});

export const MemoryDoc = z.discriminatedUnion('kind', [FactDoc, PreferenceDoc, IntentDoc]);
/** A memory as the code sees it, embedding decoded. */
export type MemoryDoc = z.output<typeof MemoryDoc>;
export type FactDoc = z.output<typeof FactDoc>;
export type PreferenceDoc = z.output<typeof PreferenceDoc>;
export type IntentDoc = z.output<typeof IntentDoc>;

/** The fields an audit entry records before and after a change (no embedding: it follows the text). */
export const MemorySnapshot = z.object({
  kind: MemoryKind,
  status: MemoryStatus,
  text: z.string(),
  key: z.string().optional(),
  value: z.string().optional(),
  statement: z.string().optional(),
  polarity: PreferencePolarity.optional(),
  topic: z.string().optional(),
  weight: z.number().optional(),
  expiresAt: z.date(),
  updatedAt: z.date(),
  supersededBy: z.string().optional(),
});
export type MemorySnapshot = z.infer<typeof MemorySnapshot>;

/** `reembed`: the same content under another embedder (reembed.ts). `purge`: content removed after the audit retention (memory-purge.ts). */
export const AuditAction = z.enum(['create', 'overwrite', 'reinforce', 'supersede', 'expire', 'delete', 'reembed', 'purge']);
export type AuditAction = z.infer<typeof AuditAction>;

export const AuditActor = z.object({
  /** `maintenance`: a job run by an operator (re-embedding). `admin`: an admin of the tenant acting on another user's memories. */
  by: z.enum(['extraction', 'user', 'admin', 'tool', 'sweep', 'import', 'maintenance']),
  /** Who asked, for a person's action through the client or the API (absent from entries written before it was recorded). */
  principal: z.object({ tenant: z.string(), user: z.string() }).optional(),
  sessionId: z.string().optional(),
  turnId: z.string().optional(),
  toolCallId: z.string().optional(),
});
export type AuditActor = z.infer<typeof AuditActor>;

/** The change one write makes: what the audit entry of the new version records. */
export const MemoryChange = z.object({
  action: AuditAction,
  reason: z.string(),
  before: MemorySnapshot.nullable(),
  at: z.date(),
  actor: AuditActor,
});
export type MemoryChange = z.infer<typeof MemoryChange>;

export const AuditDoc = z.object({
  /** `<memoryId>:v<version>`: one entry per version, so rewriting it is harmless. */
  _id: z.string().regex(/^mem_[0-9a-f]{24}:v\d+$/),
  memoryId: MemoryId,
  ns: z.string().min(1),
  tenant: z.string().min(1),
  user: z.string().min(1),
  project: OptionalProject,
  kind: MemoryKind,
  version: z.number().int().min(1),
  action: AuditAction,
  reason: z.string(),
  before: MemorySnapshot.nullable(),
  after: MemorySnapshot,
  at: z.date(),
  actor: AuditActor,
  /** Wall-clock time the writer claimed this version; how long a stalled claim is waited for. */
  claimedAt: z.date().optional(),
  /** Set when the entry's content (texts, values, reason) was removed after the audit retention. */
  purgedAt: z.date().optional(),
});
export type AuditDoc = z.output<typeof AuditDoc>;

/** A stored memory document whose shape does not match the schema. */
export class MemoryDocError extends Error {
  override readonly name = 'MemoryDocError';
  constructor(
    readonly memoryId: string,
    readonly fields: string[],
    /** What is wrong, field by field; kept so a recall copy can report the document as a full read would. */
    readonly detail: string,
  ) {
    super(`memory document ${memoryId} in MongoDB is malformed (${detail}); fix or delete it`);
  }
}

function describeIssues(issues: z.core.$ZodIssue[]): { fields: string[]; detail: string } {
  const fields = [...new Set(issues.map((i) => i.path.map(String).join('.') || '(document)'))];
  return { fields, detail: issues.map((i) => `${i.path.map(String).join('.') || '(document)'}: ${i.message}`).join('; ') };
}

export function idOf(doc: unknown): string {
  const id = (doc as { _id?: unknown } | null)?._id;
  return id === undefined ? '(no _id)' : String(id);
}

export type ParseResult<T> = { ok: true; value: T } | { ok: false; error: MemoryDocError };

export function tryParseMemory(doc: unknown): ParseResult<MemoryDoc> {
  const parsed = MemoryDoc.safeParse(doc);
  if (parsed.success) return { ok: true, value: parsed.data };
  const { fields, detail } = describeIssues(parsed.error.issues);
  return { ok: false, error: new MemoryDocError(idOf(doc), fields, detail) };
}

/** Parses a memory document or throws a `MemoryDocError` naming its id and the bad fields. */
export function parseMemory(doc: unknown): MemoryDoc {
  const result = tryParseMemory(doc);
  if (!result.ok) throw result.error;
  return result.value;
}

export function parseAudit(doc: unknown): AuditDoc {
  const parsed = AuditDoc.safeParse(doc);
  if (parsed.success) return parsed.data;
  const { fields, detail } = describeIssues(parsed.error.issues);
  throw new MemoryDocError(idOf(doc), fields, `audit entry: ${detail}`);
}

export function snapshotOf(doc: MemoryDoc): MemorySnapshot {
  const common = { kind: doc.kind, status: doc.status, text: doc.text, expiresAt: doc.expiresAt, updatedAt: doc.updatedAt };
  const superseded = doc.supersededBy ? { supersededBy: doc.supersededBy } : {};
  switch (doc.kind) {
    case 'fact':
      return { ...common, ...superseded, key: doc.key, value: doc.value };
    case 'preference':
      return { ...common, ...superseded, statement: doc.statement, polarity: doc.polarity, weight: doc.weight, ...(doc.topic ? { topic: doc.topic } : {}) };
    case 'intent':
      return { ...common, ...superseded, statement: doc.statement };
    default:
      return assertNever(doc);
  }
}

export function assertNever(value: never): never {
  throw new Error(`unexpected value: ${JSON.stringify(value)}`);
}
