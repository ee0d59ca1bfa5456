import type { z } from 'zod';
import type { MemoryAuditEntry, MemorySnapshotView, MemoryView } from './memory-activity-types';
import { sourceKeyOf } from './memory-identity';
import {
  AuditDoc,
  MemoryDoc,
  encodeEmbedding,
  snapshotOf,
  type MemoryChange,
  type MemoryNamespace,
  type MemorySnapshot,
  type MemorySource,
  type PreferencePolarity,
} from './memory-types';

/** A memory as MongoDB holds it: embedding as Binary. */
export type StoredMemory = z.input<typeof MemoryDoc>;
/**
 * An audit entry as stored. While its version is being written it also holds
 * that version's whole document (`pending`), so another writer can finish
 * the write if this one dies (see memory-store.ts).
 */
export type StoredAudit = z.input<typeof AuditDoc> & { pending?: StoredMemory };

/** What every write of a new version needs besides the memory's own fields. */
export interface VersionFields {
  text: string;
  embedding: ArrayLike<number>;
  embedderId: string;
  source: MemorySource;
  /** When the user said it (the turn's start); decides which of two statements is newer. */
  statedAt: Date;
  expiresAt: Date;
}

export interface FactInput extends VersionFields {
  subject: string;
  predicate: string;
  key: string;
  value: string;
}

export interface PreferenceInput extends VersionFields {
  statement: string;
  polarity: PreferencePolarity;
  topic?: string;
}

export interface IntentInput extends VersionFields {
  statement: string;
}

export function namespaceFields(ns: MemoryNamespace): { tenant: string; user: string; project?: string } {
  return { tenant: ns.tenant, user: ns.user, ...(ns.project !== undefined ? { project: ns.project } : {}) };
}

/** The stored form of a parsed memory. `project` is omitted, not null, when absent. */
export function toStored(doc: MemoryDoc): StoredMemory {
  const { project, embedding, supersededBy, ...rest } = doc;
  const stored = {
    ...rest,
    ...(project !== undefined ? { project } : {}),
    ...(supersededBy !== undefined ? { supersededBy } : {}),
    embedding: encodeEmbedding(embedding),
  };
  if (doc.kind === 'preference' && doc.topic === undefined) delete (stored as { topic?: string }).topic;
  return stored as StoredMemory;
}

export function auditEntryFor(doc: MemoryDoc, change: MemoryChange): StoredAudit {
  const entry: AuditDoc = {
    _id: `${doc._id}:v${doc.version}`,
    memoryId: doc._id,
    ns: doc.ns,
    tenant: doc.tenant,
    user: doc.user,
    project: doc.project,
    kind: doc.kind,
    version: doc.version,
    action: change.action,
    reason: change.reason,
    before: change.before,
    after: snapshotOf(doc),
    at: change.at,
    actor: change.actor,
  };
  if (entry.project === undefined) delete entry.project;
  return entry;
}

/** The kind-specific fields of a new memory. */
export type MemoryIdentityFields =
  | { kind: 'fact'; key: string; subject: string; predicate: string; value: string }
  | { kind: 'preference'; statement: string; polarity: PreferencePolarity; weight: number; topic?: string }
  | { kind: 'intent'; statement: string };

/** A new active memory, version 1, from what the user said. */
export function freshDoc(id: string, ns: MemoryNamespace, nsKey: string, identity: MemoryIdentityFields, input: VersionFields, now: Date): MemoryDoc {
  return {
    ...identity,
    _id: id,
    ns: nsKey,
    ...namespaceFields(ns),
    status: 'active',
    text: input.text,
    embedding: toFloat32(input.embedding),
    embedderId: input.embedderId,
    source: input.source,
    sourceKeys: [sourceKeyOf(input.source)],
    createdAt: now,
    updatedAt: now,
    statedAt: input.statedAt,
    expiresAt: input.expiresAt,
    version: 1,
  } as MemoryDoc;
}

const MAX_SOURCE_KEYS = 64;

/** The same memory stated again: the statement recorded, the expiry extended, nothing moved backwards. */
export function refreshedDoc<T extends MemoryDoc>(current: T, input: VersionFields, now: Date): T {
  return {
    ...current,
    sourceKeys: [...current.sourceKeys, sourceKeyOf(input.source)].slice(-MAX_SOURCE_KEYS),
    updatedAt: now,
    statedAt: input.statedAt > current.statedAt ? input.statedAt : current.statedAt,
    expiresAt: input.expiresAt > current.expiresAt ? input.expiresAt : current.expiresAt,
  };
}

export function toFloat32(vector: ArrayLike<number>): Float32Array {
  return vector instanceof Float32Array ? vector : Float32Array.from(vector as ArrayLike<number>);
}

/** A memory as the client lists it. */
export function viewOf(doc: MemoryDoc): MemoryView {
  const base: MemoryView = {
    id: doc._id,
    kind: doc.kind,
    status: doc.status,
    text: doc.text,
    origin: doc.source.origin === 'user' ? 'user' : 'tool_confirmed',
    sessionId: doc.source.sessionId,
    createdAt: doc.createdAt.toISOString(),
    updatedAt: doc.updatedAt.toISOString(),
    expiresAt: doc.expiresAt.toISOString(),
  };
  switch (doc.kind) {
    case 'fact':
      return { ...base, key: doc.key, value: doc.value };
    case 'preference':
      return { ...base, statement: doc.statement, polarity: doc.polarity, weight: doc.weight };
    case 'intent':
      return { ...base, statement: doc.statement };
  }
}

function snapshotViewOf(snapshot: MemorySnapshot): MemorySnapshotView {
  const { expiresAt, updatedAt, ...rest } = snapshot;
  return { ...rest, expiresAt: expiresAt.toISOString(), updatedAt: updatedAt.toISOString() };
}

/** One audit entry as the client reads it: what changed, why, by whom, when. */
export function auditViewOf(entry: AuditDoc): MemoryAuditEntry {
  return {
    version: entry.version,
    action: entry.action,
    reason: entry.reason,
    at: entry.at.toISOString(),
    actor: entry.actor,
    before: entry.before ? snapshotViewOf(entry.before) : null,
    after: snapshotViewOf(entry.after),
    ...(entry.purgedAt ? { purgedAt: entry.purgedAt.toISOString() } : {}),
  };
}

/** Where a page of a memory list ended: the next page starts after this memory, in the list's order (newest first). */
export interface ListPosition {
  updatedAt: Date;
  id: string;
}

/** A list position as the client carries it from one page to the next: `<updatedAt in ms>.<memory id>`. */
export function listCursorOf(position: ListPosition): string {
  return `${position.updatedAt.getTime()}.${position.id}`;
}

export const LIST_CURSOR_PATTERN = /^(\d{1,15})\.(mem_[0-9a-f]{6,64})$/;

/** The position a cursor names; null when it is not one `listCursorOf` made. */
export function listPositionOf(cursor: string): ListPosition | null {
  const m = LIST_CURSOR_PATTERN.exec(cursor);
  return m ? { updatedAt: new Date(Number(m[1])), id: m[2]! } : null;
}
