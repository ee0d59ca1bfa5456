import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { z } from 'zod';
import {
  NotAuthorizedError,
  SessionBusyError,
  SessionClosedError,
  SessionNotFoundError,
  SessionValidationError,
  SessionVersionConflictError,
  TemporalCallTimeoutError,
  NoWorkerError,
  TemporalUnreachableError,
  TooManyWaitingError,
  TruncatedOffsetError,
  OffsetAheadError,
} from '../client/errors';

/** RFC 9457 problem details, with our failure type and the fields a client acts on. */
export const Problem = z.object({
  type: z.string().describe('A URI naming the problem type: urn:durable-agent:problem:<FailureType>'),
  title: z.string(),
  status: z.number().int(),
  detail: z.string(),
  instance: z.string().optional(),
  failureType: z.string().describe('Our failure type, e.g. SessionVersionConflict, NotAuthorized, SessionInputInvalid'),
  currentVersion: z.number().int().optional().describe('On 409: the session version now'),
  errors: z.array(z.object({ path: z.string(), message: z.string() })).optional().describe('On 422: every invalid field'),
  retryAfterSeconds: z.number().optional(),
  earliestOffset: z.number().int().optional().describe('On 410 TruncatedOffset: the first event offset the session still keeps'),
  nextOffset: z.number().int().optional().describe('On 409 OffsetAhead: the offset the session\'s next event will have (the asked one is past it)'),
});
export type Problem = z.infer<typeof Problem>;

const TITLES: Record<number, string> = {
  400: 'Bad request',
  401: 'Not authenticated',
  403: 'Not authorized',
  404: 'Not found',
  409: 'Conflict',
  410: 'Gone',
  413: 'Request too large',
  415: 'Unsupported media type',
  422: 'Invalid input',
  429: 'Too many requests',
  500: 'Internal error',
  503: 'Temporal unavailable',
  504: 'Timed out',
};

export class ProblemError extends Error {
  constructor(
    readonly status: ContentfulStatusCode,
    readonly failureType: string,
    detail: string,
    readonly extra: Partial<Problem> = {},
  ) {
    super(detail);
  }
}

export function problemBody(status: number, failureType: string, detail: string, extra: Partial<Problem> = {}, instance?: string): Problem {
  return {
    type: `urn:durable-agent:problem:${failureType}`,
    title: TITLES[status] ?? 'Error',
    status,
    detail,
    failureType,
    ...(instance ? { instance } : {}),
    ...extra,
  };
}

export function sendProblem(c: Context, status: ContentfulStatusCode, failureType: string, detail: string, extra: Partial<Problem> = {}): Response {
  // RFC 9110: Retry-After with a 429 (slow down) or a 503 (unavailable for a while).
  if ((status === 429 || status === 503) && extra.retryAfterSeconds !== undefined) c.header('Retry-After', String(Math.ceil(extra.retryAfterSeconds)));
  return c.body(JSON.stringify(problemBody(status, failureType, detail, extra, c.req.path)), status, { 'Content-Type': 'application/problem+json' });
}

/** The problem for an error the typed client (or our handlers) threw; unknown errors are 500 without their text. */
export function problemFor(err: unknown): ProblemError {
  if (err instanceof ProblemError) return err;
  if (err instanceof SessionVersionConflictError) return new ProblemError(409, 'SessionVersionConflict', err.message, { currentVersion: err.currentVersion });
  if (err instanceof SessionNotFoundError) return new ProblemError(404, 'SessionNotFound', err.message);
  if (err instanceof NotAuthorizedError) return new ProblemError(403, 'NotAuthorized', err.message);
  if (err instanceof SessionClosedError) return new ProblemError(409, 'SessionClosed', err.message);
  if (err instanceof SessionBusyError) return new ProblemError(429, 'SessionBusy', err.message, { retryAfterSeconds: 5 });
  if (err instanceof TooManyWaitingError) return new ProblemError(429, 'TooManyWaiting', err.message, { retryAfterSeconds: 1 });
  if (err instanceof SessionValidationError) {
    const type = err.failureType ?? 'SessionInputInvalid';
    return new ProblemError(type === 'ConfirmationUnknown' || type === 'InputUnknown' ? 404 : 422, type, err.message);
  }
  if (err instanceof TruncatedOffsetError) return new ProblemError(410, 'TruncatedOffset', err.message, { earliestOffset: err.earliestOffset });
  if (err instanceof OffsetAheadError) return new ProblemError(409, 'OffsetAhead', err.message, { nextOffset: err.nextOffset });
  // The server's address and task queue are the operator's to read (the API's log has the whole message), not every caller's.
  if (err instanceof TemporalUnreachableError) return new ProblemError(503, 'TemporalUnreachable', 'The workflow service is unreachable; retry shortly. The API server\'s log names the address it tried.', { retryAfterSeconds: 5 });
  if (err instanceof NoWorkerError) {
    return new ProblemError(503, 'NoWorker', `${err.operation} was refused: no worker is running for these sessions just now, so nothing was done. Retry once one runs.`, { retryAfterSeconds: 5 });
  }
  if (err instanceof TemporalCallTimeoutError) {
    return new ProblemError(504, 'TemporalCallTimeout', `${err.operation} did not finish within ${err.timeoutMs} ms: no worker took it in time. It may still take effect when one does; read the session before you retry.`);
  }
  return new ProblemError(500, 'Internal', 'The server failed to handle the request; it was logged.');
}
