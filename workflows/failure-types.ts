/**
 * The `type` strings carried by `ApplicationFailure`s. Code on both sides of
 * the workflow sandbox classifies failures by these strings, never by
 * `instanceof`, because classes do not survive the sandbox boundary.
 */
export const FailureType = {
  /** A daily token or cost budget (BUDGETS) was reached: the turn ended before its next model call. */
  BudgetExceeded: 'BudgetExceeded',
  ToolInputInvalid: 'ToolInputInvalid',
  ToolNotAllowed: 'ToolNotAllowed',
  ToolNotFound: 'ToolNotFound',
  ToolTimeout: 'ToolTimeout',
  ToolFailed: 'ToolFailed',
  ToolPermissionDenied: 'ToolPermissionDenied',
  ToolDeclined: 'ToolDeclined',
  /** The tool's definition changed on its server between the call's planning (and confirmation) and its run: not run. */
  ToolChanged: 'ToolChanged',
  ModelRequestInvalid: 'ModelRequestInvalid',
  ModelAuthFailed: 'ModelAuthFailed',
  ModelUnavailable: 'ModelUnavailable',
  ModelOutputInvalid: 'ModelOutputInvalid',
  /** The model's answer stopped at its output limit (`finish_reason` "length"); in an `error` event only. */
  ModelOutputCut: 'ModelOutputCut',
  /** The model's provider filtered the answer (`finish_reason` "content_filter"); in an `error` event only. */
  ModelOutputFiltered: 'ModelOutputFiltered',
  SessionVersionConflict: 'SessionVersionConflict',
  SessionClosed: 'SessionClosed',
  SessionInputInvalid: 'SessionInputInvalid',
  ConfirmationUnknown: 'ConfirmationUnknown',
  /** An answer for an input that is not waiting (unknown, answered, or its tool call ended). */
  InputUnknown: 'InputUnknown',
  /** The session continued as a new run before the awaited turn ran; wait for it again (details: `{ turnId, version? }`, the version the message was accepted at). */
  TurnCarriedOver: 'TurnCarriedOver',
  ConfigInvalid: 'ConfigInvalid',
  /** A read a turn starts with (the day's budget, the tool catalog) failed after its retries: the turn ended before any model call, and the session goes on. */
  TurnReadFailed: 'TurnReadFailed',
  /** The caller's principal may not take this action on this session (not its owner, nor an approver of its tenant). */
  NotAuthorized: 'NotAuthorized',
  /** Too many messages wait for their turns (MAX_QUEUED_MESSAGES, MAX_QUEUED_BYTES): send again once some have run. */
  SessionBusy: 'SessionBusy',
  /**
   * A call that would wait on the session (an event poll, a turn wait) was refused: as many wait already as
   * the session lets wait (workflows/waiting-budget.ts). Read the same by query (`readEvents`, `getTurn`).
   */
  TooManyWaiting: 'TooManyWaiting',
} as const;
export type FailureType = (typeof FailureType)[keyof typeof FailureType];

/** Failure types that no retry can fix. */
export const nonRetryableFailureTypes: FailureType[] = [
  FailureType.ToolInputInvalid,
  FailureType.ToolNotAllowed,
  FailureType.ToolNotFound,
  FailureType.ToolPermissionDenied,
  FailureType.ModelRequestInvalid,
  FailureType.ModelAuthFailed,
  FailureType.ConfigInvalid,
];
