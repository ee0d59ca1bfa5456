import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type {
  DecideToolCallInput,
  InterruptInput,
  SendMessageInput,
  SendMessageResult,
  SessionView,
  TurnResult,
} from './session-types';

/**
 * The session's messages, defined once and shared by the workflow, the
 * client and the tests. Names are part of the public contract: any Temporal
 * client (the `temporal` CLI included) can drive a session with them and
 * plain JSON.
 */
export const WORKFLOW_TYPE = 'agentSession';
export const workflowIdFor = (sessionId: string): string => `session-${sessionId}`;

export const sendMessageUpdate = defineUpdate<SendMessageResult, [SendMessageInput]>('sendMessage');
export const decideToolCallSignal = defineSignal<[DecideToolCallInput]>('decideToolCall');
export const decideToolCallUpdate = defineUpdate<{ accepted: true }, [DecideToolCallInput]>('decideToolCall');
export const interruptSignal = defineSignal<[InterruptInput?]>('interrupt');
export const endSessionSignal = defineSignal<[{ reason?: string }?]>('endSession');
export const getSessionQuery = defineQuery<SessionView>('getSession');
/** Waits until the given turn has finished and returns its result. */
export const waitForTurnUpdate = defineUpdate<TurnResult, [{ turnId: string }]>('waitForTurn');

/** Topic of the workflow stream that carries `AgentEvent`s. */
export const EVENTS_TOPIC = 'events';
