import { createHash } from 'node:crypto';
import type { MemoryNamespace, PreferencePolarity } from './memory-types';

/**
 * Canonical key of a namespace. A JSON array cannot be confused across
 * fields ("a/b" + "c" vs "a" + "b/c"), and a namespace without a project is
 * distinct from every project of the same user.
 */
export function namespaceKey(ns: MemoryNamespace): string {
  return JSON.stringify([ns.tenant, ns.user, ns.project ?? null]);
}

/** What makes two memories the same memory; the id is derived from it. */
export type MemoryIdentity =
  | { kind: 'fact'; key: string }
  | { kind: 'preference'; statement: string; polarity: PreferencePolarity }
  | { kind: 'intent'; statement: string };

/**
 * Deterministic ids replace a partial unique index, which FerretDB lacks: the
 * one document for a namespace and fact key always has the same `_id`, so two
 * writers racing to create it collide on the primary key instead of making two.
 */
export function memoryIdFor(nsKey: string, identity: MemoryIdentity): string {
  const parts = [nsKey, identity.kind];
  switch (identity.kind) {
    case 'fact':
      parts.push(identity.key);
      break;
    case 'preference':
      parts.push(identity.polarity, identity.statement);
      break;
    case 'intent':
      parts.push(identity.statement);
      break;
  }
  return `mem_${createHash('sha256').update(parts.join('\u0000')).digest('hex').slice(0, 24)}`;
}

/** `<session>:<turn>:<message>`: one statement by the user, applied at most once. */
export function sourceKeyOf(source: { sessionId: string; turnId: string; messageIndex: number }): string {
  return `${source.sessionId}:${source.turnId}:${source.messageIndex}`;
}
