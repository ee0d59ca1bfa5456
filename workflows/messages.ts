import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { AnswerInputInput, GetInputInput, InputRequestedInput, InputState } from './input-request';
import type { GetTurnInput, ReadEventsInput, ReadEventsResult, TurnState } from './session-queries';
import type {
  DecideToolCallInput,
  EndSessionInput,
  InterruptInput,
  SendMessageInput,
  SendMessageResult,
  SessionView,
  TextDeltasInput,
  ToolProgressInput,
  TurnResult,
  WaitForTurnInput,
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
export const endSessionSignal = defineSignal<[EndSessionInput?]>('endSession');
export const getSessionQuery = defineQuery<SessionView>('getSession');
/** The session's events from an offset, without waiting (see session-queries.ts). */
export const readEventsQuery = defineQuery<ReadEventsResult, [ReadEventsInput]>('readEvents');
/** Where a turn is (queued, running, finished with its result), without waiting. */
export const getTurnQuery = defineQuery<TurnState, [GetTurnInput]>('getTurn');
/** Waits until the given turn has finished and returns its result. */
export const waitForTurnUpdate = defineUpdate<TurnResult, [WaitForTurnInput]>('waitForTurn');
/**
 * Text the model activity streamed, sent by the activity to its own
 * session. The workflow checks each batch (running turn, step, attempt,
 * order, size) and publishes the deltas itself: only the workflow puts
 * events on the stream.
 */
export const textDeltasSignal = defineSignal<[TextDeltasInput]>('textDeltas');
/** Progress of a running tool call, sent by the tool activity; checked and published by the workflow like `textDeltas`. */
export const toolProgressSignal = defineSignal<[ToolProgressInput]>('toolProgress');
/**
 * An MCP server asked the user for input during a tool call; sent by the tool
 * activity. The workflow checks it against the running call and publishes
 * `input_required`; a retried attempt asking again under the same `inputId`
 * finds the question (or its answer) already there.
 */
export const inputRequestedSignal = defineSignal<[InputRequestedInput]>('inputRequested');
/** A person's answer to a pending input (`accept` with content matching the server's schema, `decline` or `cancel`). */
export const answerInputSignal = defineSignal<[AnswerInputInput]>('answerInput');
export const answerInputUpdate = defineUpdate<{ accepted: true }, [AnswerInputInput]>('answerInput');
/** The state of one input, for the tool activity waiting on it. */
export const getInputQuery = defineQuery<InputState, [GetInputInput]>('getInput');

/** Topic of the workflow stream that carries `AgentEvent`s. */
export const EVENTS_TOPIC = 'events';
