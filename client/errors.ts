/** Base of every error the agent client throws on purpose. */
export class AgentClientError extends Error {
  override readonly name: string = 'AgentClientError';
}

/** The session moved on since the caller last read it. */
export class SessionVersionConflictError extends AgentClientError {
  override readonly name = 'SessionVersionConflictError';
  constructor(message: string, readonly currentVersion: number, readonly expectedVersion: number) {
    super(message);
  }
}

export class SessionNotFoundError extends AgentClientError {
  override readonly name = 'SessionNotFoundError';
  constructor(readonly sessionId: string) {
    super(`Session ${sessionId} does not exist (or has been archived); send a message with session options to start it.`);
  }
}

/** The caller's input or the session's state rejected the call; nothing was written. */
export class SessionValidationError extends AgentClientError {
  override readonly name = 'SessionValidationError';
  constructor(message: string, readonly failureType?: string) {
    super(message);
  }
}

/** The caller's principal may not take this action (see docs/security.md); nothing was written. */
export class NotAuthorizedError extends AgentClientError {
  override readonly name = 'NotAuthorizedError';
}

/** Too many messages wait for their turns in the session: send this one again once some have run. */
export class SessionBusyError extends AgentClientError {
  override readonly name = 'SessionBusyError';
}

/**
 * The session refused a call that would wait on it (an event poll, a turn
 * wait): as many wait already as it lets wait, to keep the server's
 * in-flight updates free for messages. Nothing was accepted. The client's
 * own reads fall back to queries on their own; a caller sending a message
 * with `waitForTurn` sees this and can send it without, then wait for the
 * turn with `waitForTurn()`.
 */
export class TooManyWaitingError extends AgentClientError {
  override readonly name = 'TooManyWaitingError';
}

/** The session is closing or archived and takes no messages on this run. */
export class SessionClosedError extends AgentClientError {
  override readonly name = 'SessionClosedError';
}

/**
 * The Temporal server did not answer: nothing listens at `address`, or the
 * connection broke. Nothing the call would have written can be assumed written.
 */
export class TemporalUnreachableError extends AgentClientError {
  override readonly name = 'TemporalUnreachableError';
  constructor(readonly address: string, readonly operation: string, readonly elapsedMs: number, detail?: string) {
    super(
      `The Temporal server at ${address} is unreachable: ${operation} gave up after ${elapsedMs} ms${detail ? ` (${detail})` : ''}. ` +
        'Check that the server runs and that TEMPORAL_ADDRESS points at it, then retry.',
    );
  }
}

/** The server answers, but the call did not finish within its deadline (typically: no worker polls the task queue). */
export class TemporalCallTimeoutError extends AgentClientError {
  override readonly name = 'TemporalCallTimeoutError';
  constructor(readonly operation: string, readonly timeoutMs: number, readonly address: string, readonly taskQueue: string) {
    super(
      `${operation} did not finish within ${timeoutMs} ms, although the Temporal server at ${address} answers. ` +
        `Check that a durable-agent worker is running on task queue "${taskQueue}"; the call may still take effect when one does.`,
    );
  }
}

/**
 * The server refused the call at once because no worker has polled the task
 * queue lately (it says "no poller seen for task queue recently"): a query
 * to a session whose workers have been gone a while. Nothing was done; retry
 * once a worker runs. Until the server notices the workers are gone, the
 * same call waits out its deadline instead (TemporalCallTimeoutError).
 */
export class NoWorkerError extends AgentClientError {
  override readonly name = 'NoWorkerError';
  constructor(readonly operation: string, readonly address: string, readonly taskQueue: string) {
    super(
      `${operation} was refused by the Temporal server at ${address}: no worker has polled task queue "${taskQueue}" lately. ` +
        'Start a durable-agent worker on that task queue, then retry; nothing was done.',
    );
  }
}

/**
 * The events from the asked offset on are no longer kept: the session's
 * stream keeps recent events only (a run that continued as new carries the
 * last ones). `earliestOffset` is the first offset still readable.
 */
export class TruncatedOffsetError extends AgentClientError {
  override readonly name = 'TruncatedOffsetError';
  constructor(readonly sessionId: string, readonly requestedOffset: number, readonly earliestOffset: number) {
    super(
      `Session ${sessionId} no longer keeps events from offset ${requestedOffset}: the earliest it keeps is ${earliestOffset}. ` +
        `Read the session's state with getSession, then follow events from offset ${earliestOffset}.`,
    );
  }
}

/**
 * The asked offset is past the end of the session's event stream: no event
 * has it yet. A reader that followed the session before gets this when the
 * session has started afresh since (it ended without an archive, or its
 * archive expired, and a new message started it again, its offsets from 0).
 * `nextOffset` is the offset the session's next event will have.
 */
export class OffsetAheadError extends AgentClientError {
  override readonly name = 'OffsetAheadError';
  constructor(readonly sessionId: string, readonly requestedOffset: number, readonly nextOffset: number) {
    super(
      `Session ${sessionId} has published events up to offset ${nextOffset - 1} only, so offset ${requestedOffset} is ahead of it. ` +
        'If you read this session before, it has started afresh since: read it again from offset 0.',
    );
  }
}
