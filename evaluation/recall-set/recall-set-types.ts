/**
 * The labelled recall set: people (each a memory namespace) with what they
 * told the agent over time, and questions whose answers are some of those
 * memories. Read by `npm run bench:memory` (quality per language, through the
 * real repository), bench/memory-thresholds.ts (threshold calibration) and
 * test/unit/memory-recall-set.test.ts (structure, and a slice through the
 * real ranking).
 *
 * - A query never shares a content word with a memory it expects (English:
 *   the offline embedder's own tokens after stemming; Chinese: content
 *   characters, see CHINESE_STOP_CHARACTERS), so word overlap cannot find it.
 * - Distractors sit on a nearby topic and usually share a word with the query.
 * - `stale` (past its expiry), `superseded` and `deleted` memories, and any
 *   memory of another namespace, must never come back.
 * - A case with no expected ids asks about something the person never said:
 *   nothing should come back as remembered.
 */
export const MemoryState = {
  Live: 'live',
  /** Active but past `expiresAt`: the store filters it at query time. */
  Stale: 'stale',
  Superseded: 'superseded',
  Deleted: 'deleted',
} as const;
export type MemoryState = (typeof MemoryState)[keyof typeof MemoryState];

export type LabelledKind = 'fact' | 'preference' | 'intent';

export interface LabelledNamespace {
  tenant: string;
  user: string;
  project?: string;
}

export interface LabelledMemory {
  /** Unique across the whole set (both languages). */
  id: string;
  namespace: LabelledNamespace;
  kind: LabelledKind;
  state: MemoryState;
  /** As extraction writes it: third person ("The user ..." / "用户..."). */
  text: string;
  /** For `superseded`: the memory that replaced it. */
  supersededBy?: string;
}

export interface RecallCase {
  id: string;
  namespace: LabelledNamespace;
  query: string;
  /** Ids of live memories of `namespace`; empty when nothing should be recalled. */
  expected: string[];
}

export interface RecallSet {
  language: 'en' | 'zh';
  memories: LabelledMemory[];
  cases: RecallCase[];
}

/** One person's memories and questions, written compactly; `person()` expands it. */
export interface PersonSpec {
  /** Short handle, part of every id: `en.ana.hometown`. */
  handle: string;
  namespace: LabelledNamespace;
  /** [key, kind, text, state?, supersededBy key?] */
  memories: Array<[string, LabelledKind, string, MemoryState?, string?]>;
  /** Memories stored under other namespaces (another user, tenant or project) that would answer this person's questions. */
  elsewhere?: Array<[string, LabelledNamespace, LabelledKind, string]>;
  /** [query, expected keys] */
  cases: Array<[string, string[]]>;
}

export function person(language: 'en' | 'zh', spec: PersonSpec): { memories: LabelledMemory[]; cases: RecallCase[] } {
  const id = (key: string) => `${language}.${spec.handle}.${key}`;
  const memories: LabelledMemory[] = spec.memories.map(([key, kind, text, state, by]) => ({
    id: id(key),
    namespace: spec.namespace,
    kind,
    state: state ?? MemoryState.Live,
    text,
    ...(by ? { supersededBy: id(by) } : {}),
  }));
  for (const [key, namespace, kind, text] of spec.elsewhere ?? []) {
    memories.push({ id: id(`elsewhere.${key}`), namespace, kind, state: MemoryState.Live, text });
  }
  const cases: RecallCase[] = spec.cases.map(([query, expected], i) => ({
    id: `${id('q')}${String(i + 1).padStart(2, '0')}`,
    namespace: spec.namespace,
    query,
    expected: expected.map(id),
  }));
  return { memories, cases };
}

export function buildSet(language: 'en' | 'zh', specs: PersonSpec[]): RecallSet {
  const parts = specs.map((s) => person(language, s));
  return { language, memories: parts.flatMap((p) => p.memories), cases: parts.flatMap((p) => p.cases) };
}

export function namespaceLabel(ns: LabelledNamespace): string {
  return JSON.stringify([ns.tenant, ns.user, ns.project ?? null]);
}
