import type { ChatMessage } from '../../workflows/chat-message';
import type { UserNamespace } from '../../workflows/session-types';
import type { AuditAction, AuditActor } from './memory-types';
import type { RejectionCounts } from './quality-gate';

/**
 * Inputs and outputs of the memory activities. Plain JSON (dates as ISO
 * strings), small, and importable by the workflow as types only.
 */

export type MemoryKindName = 'fact' | 'preference' | 'intent';

/** One memory injected into this turn's context. */
export interface RecalledMemory {
  /** Full id, `mem_<24 hex>`. */
  id: string;
  /** What the model cites as `[mem:<shortId>]`; unique within one recall. */
  shortId: string;
  kind: MemoryKindName;
  tier: 'strong' | 'weak';
  text: string;
  /** The line as it appears in the recalled-memories region. */
  line: string;
  /** Cosine similarity to the user's message. */
  similarity: number;
  /** Similarity plus the preference-weight boost: the ranking key. */
  score: number;
  /** `user`: the user said it; `tool_confirmed`: a tool said it and the user confirmed. */
  origin: 'user' | 'tool_confirmed';
  createdAt: string;
  updatedAt: string;
}

export interface RecallMemoriesInput {
  namespace: UserNamespace;
  /** The user's message this turn. */
  query: string;
  sessionId: string;
  turnId: string;
}

export interface RecallMemoriesResult {
  strong: RecalledMemory[];
  weak: RecalledMemory[];
  tookMs: number;
  /** The labelled block to put in the context, apart from the conversation; '' when nothing was recalled. */
  region: string;
  /** Short ids injected this turn: the only ids an answer may cite. */
  injectedIds: string[];
  embedderId: string;
  thresholds: { strong: number; weak: number };
  /** Whether the namespace came from this worker's cache (false: it was loaded from MongoDB). */
  cacheHit: boolean;
  /** Memories left out: below the weak threshold, over a cap, malformed in MongoDB, or embedded by another embedder. */
  skipped: { belowWeak: number; overCap: number; malformed: number; otherEmbedder: number };
  /** Where the ranking ran: `atlas` ($vectorSearch on the server) or `local` (in the worker). */
  recallPath?: 'atlas' | 'local';
}

export interface ExtractMemoriesInput {
  namespace: UserNamespace;
  sessionId: string;
  /**
   * The turns since the last extraction pass (or the turn that triggered an
   * event). `startedAt` (the workflow's `Turn.startedAt`) dates each statement,
   * so an old turn processed late never overwrites a newer memory.
   */
  turns: Array<{ turnId: string; messages: ChatMessage[]; startedAt?: string }>;
  /**
   * Turns an earlier pass already read (the last one), shown before `turns`
   * so that a question asked there and answered with a yes in `turns`
   * confirms what it asked about. Nothing is extracted from them otherwise.
   */
  contextTurns?: Array<{ turnId: string; messages: ChatMessage[]; startedAt?: string }>;
  reason: 'event' | 'periodic' | 'archive';
}

export interface ExtractionCounts {
  /** Candidates the model proposed. */
  candidates: number;
  created: number;
  overwritten: number;
  reinforced: number;
  /** Older memories superseded by a contradicting new one. */
  superseded: number;
  /** Candidates that matched what is stored already (a retried pass lands here). */
  unchanged: number;
  rejected: RejectionCounts;
  /** Candidates that passed but could not be written (a malformed stored document, say); see the worker log. */
  errors: number;
}

export interface SweepExpiredMemoriesInput {
  /** ISO time to sweep as of; defaults to now. */
  now?: string;
}

export interface MemoryView {
  id: string;
  kind: MemoryKindName;
  status: 'active' | 'superseded' | 'expired' | 'deleted';
  text: string;
  key?: string;
  value?: string;
  statement?: string;
  polarity?: 'prefers' | 'avoids';
  weight?: number;
  origin: 'user' | 'tool_confirmed';
  sessionId: string;
  createdAt: string;
  updatedAt: string;
  expiresAt: string;
}

export interface ListMemoriesInput {
  namespace: UserNamespace;
  kinds?: MemoryKindName[];
  /** Default: active only. */
  statuses?: MemoryView['status'][];
  /** Only memories whose text contains this, ignoring case (matched in the database, before the limit); at most 200 characters. */
  contains?: string;
  /** Default 100, at most 500. */
  limit?: number;
  /** The `next` of the previous page: this page starts after it. */
  after?: string;
}

export interface ListMemoriesResult {
  memories: MemoryView[];
  /** Stored documents that failed to parse and were left out (their ids are in the worker log). */
  malformed: number;
  /** Set when more memories match: pass it as `after` for the next page. */
  next?: string;
}

export interface DeleteMemoryInput {
  namespace: UserNamespace;
  /** Full id (`mem_...`). */
  memoryId: string;
  reason?: string;
  /** Who deletes (the caller's principal, already checked): the audit says the user or an admin, and who. */
  deletedBy?: { tenant: string; user: string };
}

export interface DeleteMemoryResult {
  deleted: boolean;
  /** The memory as it was, when it existed in this namespace. */
  memory?: MemoryView;
}

export interface MemoryAuditInput {
  namespace: UserNamespace;
  /** Full id (`mem_...`). */
  memoryId: string;
}

/** What a memory held before or after one change (texts empty once purged after the audit retention). */
export interface MemorySnapshotView {
  kind: MemoryKindName;
  status: MemoryView['status'];
  text: string;
  key?: string;
  value?: string;
  statement?: string;
  polarity?: 'prefers' | 'avoids';
  topic?: string;
  weight?: number;
  expiresAt: string;
  updatedAt: string;
  supersededBy?: string;
}

/** One change of a memory, as its audit trail records it. */
export interface MemoryAuditEntry {
  version: number;
  action: AuditAction;
  reason: string;
  at: string;
  /** Who or what made the change; `principal` names the person for deletions through the client or the API. */
  actor: AuditActor;
  before: MemorySnapshotView | null;
  after: MemorySnapshotView;
  /** Set when the entry's texts and reason were removed after the audit retention. */
  purgedAt?: string;
}

export interface MemoryAuditResult {
  /** Oldest first (by version); empty when the namespace has no memory of that id. */
  entries: MemoryAuditEntry[];
  /** Stored entries that failed to parse and were left out (their ids are in the worker log). */
  malformed: number;
}

/** The memory activities, by name, for `proxyActivities<MemoryActivities>()`. */
export interface MemoryActivities {
  recallMemories(input: RecallMemoriesInput): Promise<RecallMemoriesResult>;
  extractMemories(input: ExtractMemoriesInput): Promise<ExtractionCounts>;
  /** `purged`, `auditsScrubbed`: content removed after the audit retention (absent from results recorded before the purge existed). */
  sweepExpiredMemories(input: SweepExpiredMemoriesInput): Promise<{ expired: number; purged?: number; auditsScrubbed?: number }>;
  listMemories(input: ListMemoriesInput): Promise<ListMemoriesResult>;
  deleteMemory(input: DeleteMemoryInput): Promise<DeleteMemoryResult>;
  memoryAuditTrail(input: MemoryAuditInput): Promise<MemoryAuditResult>;
}
