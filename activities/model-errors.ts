import { ApplicationFailure } from '@temporalio/common';
import OpenAI from 'openai';
import { FailureType } from '../workflows/failure-types';

/** The model API's base URL as it may be shown: scheme, host, port and path, never credentials, query or fragment. */
export function displayBaseUrl(baseUrl: string): string {
  try {
    const url = new URL(baseUrl);
    return `${url.protocol}//${url.host}${url.pathname.replace(/\/$/, '')}`;
  } catch {
    return '(the configured OPENAI_BASE_URL)';
  }
}

/**
 * Maps an error from the openai SDK to a failure the retry policy understands.
 * `baseUrl` (the client's) is named in unreachable and server-error messages,
 * so a person sees which server the worker could not use.
 */
/** The longest wait a rate-limited call takes before its next attempt; a server that asks for more fails the call. */
export const MAX_RETRY_AFTER_MS = 60_000;

/** The wait a 429 asks for, in ms: `retry-after-ms`, or `retry-after` in seconds or as an HTTP date. */
function retryAfterMs(headers: { get?: (name: string) => string | null } | undefined, now = Date.now()): number | undefined {
  const ms = Number(headers?.get?.('retry-after-ms') ?? Number.NaN);
  if (Number.isFinite(ms) && ms > 0) return ms;
  const value = headers?.get?.('retry-after')?.trim();
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return seconds > 0 ? seconds * 1000 : undefined;
  const at = Date.parse(value);
  return Number.isFinite(at) && at > now ? at - now : undefined;
}

/** An error event inside a stream has no HTTP status; its code, when it is one, stands for it. */
function statusOf(err: InstanceType<typeof OpenAI.APIError>): number | undefined {
  if (err.status !== undefined) return err.status;
  const code = (err.error as { code?: unknown } | undefined)?.code ?? (err as { code?: unknown }).code;
  const asNumber = typeof code === 'number' ? code : typeof code === 'string' && /^\d{3}$/.test(code) ? Number(code) : undefined;
  return asNumber !== undefined && asNumber >= 400 && asNumber <= 599 ? asNumber : undefined;
}

export function classifyModelError(err: unknown, model: string, baseUrl?: string): ApplicationFailure {
  const where = baseUrl === undefined ? '' : ` at ${displayBaseUrl(baseUrl)}`;
  const inStream = err instanceof OpenAI.APIError && !(err instanceof OpenAI.APIConnectionError) && !(err instanceof OpenAI.APIUserAbortError) && err.status === undefined;
  if (inStream && statusOf(err) === undefined) {
    // An error event in the stream (HTTP 200 already sent) without a status-like code: the server answered, so it is not unreachable.
    return ApplicationFailure.retryable(`The model API${where} reported an error in its stream: ${err.message}`, FailureType.ModelUnavailable);
  }
  const status = err instanceof OpenAI.APIError ? statusOf(err) : undefined;
  if (err instanceof OpenAI.APIError && status !== undefined) {
    const detail = err.message;
    const code = (err as { code?: string | null }).code ?? (err.error as { code?: unknown } | undefined)?.code;
    if (status === 402 || (status === 429 && code === 'insufficient_quota')) {
      return ApplicationFailure.nonRetryable(
        `The model API refused the request for the account's quota or billing (${status}${code ? ` ${String(code)}` : ''}): ${detail}. Check the account's credit and limits; trying again will not help.`,
        FailureType.ModelAuthFailed,
      );
    }
    if (status === 429) {
      const wait = retryAfterMs(err.headers as { get?: (name: string) => string | null } | undefined);
      if (wait !== undefined && wait > MAX_RETRY_AFTER_MS) {
        // Temporal does not cap a failure's own retry delay by the policy's maximum interval: a day's wait parked the turn for a day, per attempt.
        return ApplicationFailure.nonRetryable(
          `The model API is rate limiting requests (429) and asks to wait ${Math.ceil(wait / 1000)} s, longer than a call waits (${MAX_RETRY_AFTER_MS / 1000} s): ${detail}. Send the message again later.`,
          FailureType.ModelUnavailable,
        );
      }
      return ApplicationFailure.create({ message: `The model API is rate limiting requests (429): ${detail}`, type: FailureType.ModelUnavailable, nextRetryDelay: wait });
    }
    if (status === 413) {
      return ApplicationFailure.nonRetryable(
        `The model API rejected the request as too large (413): ${detail}. Lower the session's window limits or use a server that takes larger requests.`,
        FailureType.ModelRequestInvalid,
      );
    }
    if (status === 401 || status === 403) {
      return ApplicationFailure.nonRetryable(
        `The model API refused the credentials (${status}): ${detail}. Check OPENAI_API_KEY and that the key may use model "${model}".`,
        FailureType.ModelAuthFailed,
      );
    }
    if (status === 400 || status === 404 || status === 422) {
      const hint =
        code === 'context_length_exceeded'
          ? 'The conversation is longer than the model\'s context window: lower the window size or use a model with a larger context.'
          : status === 404
            ? `Check MODEL_NAME ("${model}") and OPENAI_BASE_URL.`
            : 'The request was rejected as invalid; check the model name, the tool schemas and the message sequence.';
      return ApplicationFailure.nonRetryable(`The model API rejected the request (${status}${code ? ` ${String(code)}` : ''}): ${detail}. ${hint}`, FailureType.ModelRequestInvalid);
    }
    return ApplicationFailure.retryable(`The model API${where} failed (${status}): ${detail}`, FailureType.ModelUnavailable);
  }
  const message = err instanceof Error ? err.message : String(err);
  // fetch() hides the useful part ("ECONNREFUSED 127.0.0.1:11434") in its causes.
  const causes: string[] = [];
  // Duck-typed: errors from Node's own fetch may come from another realm (e.g. under jest).
  let e: unknown = (err as { cause?: unknown } | null)?.cause;
  for (let depth = 0; typeof (e as { message?: unknown } | null)?.message === 'string' && depth < 3; depth++) {
    const text = (e as { message: string }).message;
    if (text && !message.includes(text)) causes.push(text);
    e = (e as { cause?: unknown }).cause;
  }
  const cause = causes.length > 0 ? ` (${causes.join(': ')})` : '';
  return ApplicationFailure.retryable(
    `Could not reach the model API${where}: ${message}${cause}. Check that the model server runs and that OPENAI_BASE_URL points at it.`,
    FailureType.ModelUnavailable,
  );
}
