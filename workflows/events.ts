import { z } from 'zod';
import { InputAction, InputAnsweredBy, PendingInput } from './input-request';
import { Actor } from './principal';
import { Activity, PendingConfirmation, SessionStatus, TurnOutcome } from './session-types';
import { builtOnce } from './built-once';

const schemas = builtOnce('events', () => {
  const base = {
    sessionId: z.string(),
    /** Workflow time when the event was produced, ISO 8601. */
    at: z.string(),
  };

  const TextDeltaEvent = z.object({
    type: z.literal('text_delta'),
    ...base,
    turnId: z.string(),
    step: z.number().int(),
    /** Activity attempt that streamed it; a retried model call streams again, so renderers restart the step on a new attempt. */
    attempt: z.number().int().min(1),
    delta: z.string(),
  }).meta({ id: 'TextDeltaEvent' });

  const ToolCallStartEvent = z.object({
    type: z.literal('tool_call_start'),
    ...base,
    turnId: z.string(),
    step: z.number().int(),
    toolCallId: z.string(),
    toolName: z.string(),
    /** The arguments as the model sent them, cut to a bounded single-line preview (never the raw object). */
    argumentsPreview: z.string().max(1_000),
  }).meta({ id: 'ToolCallStartEvent' });

  const ToolCallResultEvent = z.object({
    type: z.literal('tool_call_result'),
    ...base,
    turnId: z.string(),
    step: z.number().int(),
    toolCallId: z.string(),
    toolName: z.string(),
    ok: z.boolean(),
    /** A short form of the result (the model got the whole of it, up to its own limit). */
    preview: z.string(),
    errorType: z.string().optional(),
    /** Time the tool ran (retries included), not counting a wait for confirmation. */
    durationMs: z.number(),
    /** Time the call waited for a person to confirm it, when it had to. */
    waitedMs: z.number().optional(),
  }).meta({ id: 'ToolCallResultEvent' });

  /** A long-running tool reported progress (MCP `notifications/progress`), through the tool activity's `toolProgress` signal. */
  const ToolCallProgressEvent = z.object({
    type: z.literal('tool_call_progress'),
    ...base,
    turnId: z.string(),
    step: z.number().int().optional(),
    toolCallId: z.string(),
    toolName: z.string(),
    /** Grows with each event of a call; `total` when the tool knows it. */
    progress: z.number(),
    total: z.number().optional(),
    message: z.string().optional(),
  }).meta({ id: 'ToolCallProgressEvent' });

  const StatusChangeEvent = z.object({
    type: z.literal('status_change'),
    ...base,
    status: SessionStatus,
    activity: Activity,
    turnId: z.string().optional(),
    reason: z.string().optional(),
  }).meta({ id: 'StatusChangeEvent' });

  const ConfirmationRequiredEvent = z.object({
    type: z.literal('confirmation_required'),
    ...base,
    confirmation: PendingConfirmation,
  }).meta({ id: 'ConfirmationRequiredEvent' });

  const ConfirmationDecidedEvent = z.object({
    type: z.literal('confirmation_decided'),
    ...base,
    toolCallId: z.string(),
    approved: z.boolean(),
    reason: z.string().optional(),
    /** `timeout` when nobody answered in time. */
    decidedBy: z.enum(['user', 'timeout', 'interrupt']),
    /** Who decided, for audit (tenant and user), when a person did. */
    principal: Actor.optional(),
  }).meta({ id: 'ConfirmationDecidedEvent' });

  /** An MCP server asked the user for input mid-call (`elicitation/create`); answer with `answerInput`. */
  const InputRequiredEvent = z.object({
    type: z.literal('input_required'),
    ...base,
    input: PendingInput,
  }).meta({ id: 'InputRequiredEvent' });

  /** The wait for an input ended: a person answered, it timed out (`cancel` to the server), or the call ended first. */
  const InputAnsweredEvent = z.object({
    type: z.literal('input_answered'),
    ...base,
    turnId: z.string(),
    inputId: z.string(),
    toolCallId: z.string(),
    action: InputAction,
    answeredBy: InputAnsweredBy,
  }).meta({ id: 'InputAnsweredEvent' });

  const TurnCompletedEvent = z.object({
    type: z.literal('turn_completed'),
    ...base,
    turnId: z.string(),
    outcome: TurnOutcome,
    text: z.string(),
    version: z.number().int(),
  }).meta({ id: 'TurnCompletedEvent' });

  const ErrorEvent = z.object({
    type: z.literal('error'),
    ...base,
    turnId: z.string().optional(),
    errorType: z.string(),
    message: z.string(),
  }).meta({ id: 'ErrorEvent' });

  const MemoryRecalledEvent = z.object({
    type: z.literal('memory_recalled'),
    ...base,
    turnId: z.string(),
    /** Short ids injected this turn, strong first. */
    strong: z.array(z.string()),
    weak: z.array(z.string()),
    tookMs: z.number(),
  }).meta({ id: 'MemoryRecalledEvent' });

  const CitationFlaggedEvent = z.object({
    type: z.literal('citation_flagged'),
    ...base,
    turnId: z.string(),
    /** Ids the answer cited that were not injected this turn. */
    unknownIds: z.array(z.string()),
    /** `regenerated`: the answer was asked for again; `removed`: the citations were stripped from the final answer. */
    action: z.enum(['regenerated', 'removed']),
  }).meta({ id: 'CitationFlaggedEvent' });

  /**
   * Everything a session streams to its observers, discriminated on `type`.
   * The `meta` ids name this union and its members as components of the API's
   * OpenAPI document, so readers in any language get the schema that every
   * published event is validated against.
   */
  const AgentEvent = z.discriminatedUnion('type', [
    TextDeltaEvent,
    ToolCallStartEvent,
    ToolCallResultEvent,
    ToolCallProgressEvent,
    StatusChangeEvent,
    ConfirmationRequiredEvent,
    ConfirmationDecidedEvent,
    TurnCompletedEvent,
    ErrorEvent,
    MemoryRecalledEvent,
    CitationFlaggedEvent,
    InputRequiredEvent,
    InputAnsweredEvent,
  ]).meta({ id: 'AgentEvent', description: 'An event a session publishes, discriminated on `type`.' });
  return { TextDeltaEvent, ToolCallStartEvent, ToolCallResultEvent, ToolCallProgressEvent, StatusChangeEvent, ConfirmationRequiredEvent, ConfirmationDecidedEvent, InputRequiredEvent, InputAnsweredEvent, TurnCompletedEvent, ErrorEvent, MemoryRecalledEvent, CitationFlaggedEvent, AgentEvent };
});

export const { TextDeltaEvent, ToolCallStartEvent, ToolCallResultEvent, ToolCallProgressEvent, StatusChangeEvent, ConfirmationRequiredEvent, ConfirmationDecidedEvent, InputRequiredEvent, InputAnsweredEvent, TurnCompletedEvent, ErrorEvent, MemoryRecalledEvent, CitationFlaggedEvent, AgentEvent } = schemas;
export type AgentEvent = z.infer<typeof AgentEvent>;
export type TextDeltaEvent = z.infer<typeof TextDeltaEvent>;
export type AgentEventType = AgentEvent['type'];
