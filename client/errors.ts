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

/** The session is closing or archived and takes no messages on this run. */
export class SessionClosedError extends AgentClientError {
  override readonly name = 'SessionClosedError';
}
