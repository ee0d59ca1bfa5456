import { ApplicationFailure } from '@temporalio/common';
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

export function toolFailure(err: unknown, toolName: string): ApplicationFailure {
  if (err instanceof ApplicationFailure) return err;
  const message = err instanceof Error ? err.message : String(err);
  if (err instanceof ToolPermissionError) {
    return ApplicationFailure.nonRetryable(`${toolName}: permission denied: ${message}`, FailureType.ToolPermissionDenied);
  }
  if (err instanceof ToolInputError) return ApplicationFailure.nonRetryable(`${toolName}: ${message}`, FailureType.ToolInputInvalid);
  if (err instanceof ToolPermanentError) return ApplicationFailure.nonRetryable(`${toolName}: ${message}`, FailureType.ToolFailed);
  return ApplicationFailure.retryable(`${toolName} failed: ${message}`, FailureType.ToolFailed);
}
