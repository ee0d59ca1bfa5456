import type { WorkflowStreamState } from '@temporalio/workflow-streams/workflow';
import type { SendMessageResult, SessionCounters, SessionStatus, Turn, TurnResult } from './session-types';

/** A message accepted by `sendMessage` and waiting for its turn. */
export interface QueuedMessage {
  turnId: string;
  text: string;
  clientMessageId?: string;
  receivedAt: string;
}

/**
 * The compact state a session carries across continue-as-new: enough to
 * answer every query and to keep the conversation going, nothing more.
 */
export interface CarriedState {
  status: SessionStatus;
  createdAt: string;
  version: number;
  turnSeq: number;
  window: Turn[];
  counters: SessionCounters;
  queue: QueuedMessage[];
  /** clientMessageId -> the answer given the first time, newest last. */
  processed: Array<[string, SendMessageResult]>;
  recentResults: TurnResult[];
  stream?: WorkflowStreamState;
}

/** How many clientMessageIds and turn results are remembered for de-duplication and `waitForTurn`. */
export const DEDUPE_MEMORY = 200;
export const RESULT_MEMORY = 50;
