import { ApplicationFailure } from '@temporalio/common';
import { MongoNetworkError, MongoNotConnectedError, MongoServerSelectionError, MongoTopologyClosedError } from 'mongodb';
import { FailureType } from '../../workflows/failure-types';

/**
 * Errors a tool executor throws to say why it failed. Each becomes an
 * `ApplicationFailure` of a known type, so the workflow can tell the model
 * what happened and what to do next.
 */
export class ToolPermissionError extends Error {
  override readonly name = 'ToolPermissionError';
}
export class ToolInputError extends Error {
  override readonly name = 'ToolInputError';
}
/** A failure that retrying will not fix (a missing record, a business rule). */
export class ToolPermanentError extends Error {
  override readonly name = 'ToolPermanentError';
}

/**
 * The worker cannot reach MongoDB (no server selected in time, connection lost
 * or closed). The driver fails within its server selection timeout, which the
 * worker keeps below the tool timeout, so the model hears this instead of a
 * bare ToolTimeout.
 */
export function isDatabaseUnreachable(err: unknown): boolean {
  return (
    err instanceof MongoServerSelectionError ||
    err instanceof MongoNetworkError ||
    err instanceof MongoTopologyClosedError ||
    err instanceof MongoNotConnectedError
  );
}

export function toolFailure(err: unknown, toolName: string): ApplicationFailure {
  if (err instanceof ApplicationFailure) return err;
  const message = err instanceof Error ? err.message : String(err);
  if (isDatabaseUnreachable(err)) {
    // Not retried: every attempt would wait out the same timeout while the user waits.
    return ApplicationFailure.nonRetryable(
      `${toolName}: the database (MongoDB) is unreachable from the worker right now (${message}). Next step: tell the user ` +
        'that their data cannot be read or changed at the moment and offer to try again in a few minutes; do not call tools ' +
        'that use stored data again in this turn.',
      FailureType.ToolFailed,
    );
  }
  if (err instanceof ToolPermissionError) {
    return ApplicationFailure.nonRetryable(`${toolName}: permission denied: ${message}`, FailureType.ToolPermissionDenied);
  }
  if (err instanceof ToolInputError) return ApplicationFailure.nonRetryable(`${toolName}: ${message}`, FailureType.ToolInputInvalid);
  if (err instanceof ToolPermanentError) return ApplicationFailure.nonRetryable(`${toolName}: ${message}`, FailureType.ToolFailed);
  return ApplicationFailure.retryable(`${toolName} failed: ${message}`, FailureType.ToolFailed);
}
