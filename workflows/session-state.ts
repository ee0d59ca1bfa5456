import type { WorkflowStreamState } from '@temporalio/workflow-streams/workflow';
import type { ToolCallOutcome } from './react-turn';
import type { PinnedText } from './tool-pins';
import type { ContextState } from './session-context';
import type { SendMessageResult, SessionCounters, SessionStatus, Turn, TurnResult } from './session-types';
import { inBaseline } from './patches';

/** A message accepted by `sendMessage` and waiting for its turn. */
export interface QueuedMessage {
  turnId: string;
  text: string;
  clientMessageId?: string;
  receivedAt: string;
  /** Who sent it (absent for messages from before `principal-required`). */
  by?: { tenant: string; user: string };
}

export interface ToolCallRecord extends ToolCallOutcome {
  turnId: string;
}

/**
 * The compact state a session carries across continue-as-new: enough to
 * answer every query and to keep the conversation going, nothing more.
 */
export interface CarriedState {
  status: SessionStatus;
  createdAt: string;
  version: number;
  /** The archive version this chain of runs restored from; archive writes are conditional on it. */
  baseVersion: number;
  turnSeq: number;
  context: ContextState;
  counters: SessionCounters;
  queue: QueuedMessage[];
  /** clientMessageId -> the answer given the first time, newest last. */
  processed: Array<[string, SendMessageResult]>;
  recentResults: TurnResult[];
  toolRecords: ToolCallRecord[];
  toolHashes: Array<[string, string]>;
  /** The text each pin was made with (bounded; see tool-pins.ts); absent in runs carried from before it was kept. */
  toolPinTexts?: Array<[string, PinnedText]>;
  /** Turns since the last memory extraction pass. */
  pendingExtraction?: Turn[];
  /** The last turn an extraction pass read: the next pass sees it too, so a yes in the next turn confirms what it asked. */
  lastExtractedTurn?: Turn;
  stream?: WorkflowStreamState;
  /** The session's owner; absent in runs carried from before it was kept (the options' namespace then). */
  owner?: { tenant: string; user: string };
  /** Folds failed in a row, and turns still to end before the next is tried (workflows/session-turn.ts, `FOLD_BACKOFF`). */
  foldBackoff?: { failures: number; skip: number };
  /** An end request the run received before it continued as new: the next run runs what is queued and closes. */
  endRequested?: boolean;
  /**
   * The message ids the chain restored from its archive and has not answered since (at most DEDUPE_MEMORY): a retry
   * of a message taken before the archive is that turn in every run of the chain, and the next archive keeps them.
   * Absent in runs carried from before they were carried (a retry after such a continue-as-new was a new turn).
   */
  archivedMessageIds?: Array<[string, { turnId: string; version: number }]>;
}

/** How many clientMessageIds, turn results and tool records are remembered. */
export const DEDUPE_MEMORY = 200;
export const RESULT_MEMORY = 50;
export const TOOL_RECORD_MEMORY = 200;
/**
 * Bytes of recent events (encoded) carried in the stream log across
 * continue-as-new; older offsets can no longer be resumed. Bounded in bytes,
 * not count, because the carried state is one payload and must stay far
 * below Temporal's limits.
 */
export const STREAM_BYTES_KEPT = 64_000;

/**
 * Patch id: after folds fail in a row, the next one waits for more turns to
 * end (none after the first failure, then 1, 3, 7, up to MAX_FOLD_SKIP).
 * Each failed fold is three attempts the next turn waits for (about 3 s),
 * and a summarizer that keeps failing (a model that cannot answer in JSON)
 * would otherwise add them to every turn. Runs from before it try after
 * every turn.
 */
export const FOLD_BACKOFF = inBaseline('fold-backoff');
export const MAX_FOLD_SKIP = 15;

/**
 * Patch id: turns waiting for a fold that go past the window's token budget
 * (the summarizer keeps failing) become one line each in the summary's
 * notes instead of staying whole in every prompt. Runs from before it keep
 * them all.
 */
export const UNFOLDED_CAP = inBaseline('unfolded-cap');
