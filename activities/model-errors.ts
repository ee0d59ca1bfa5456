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
export function classifyModelError(err: unknown, model: string, baseUrl?: string): ApplicationFailure {
  const where = baseUrl === undefined ? '' : ` at ${displayBaseUrl(baseUrl)}`;
  if (err instanceof OpenAI.APIError && err.status !== undefined) {
    const status = err.status;
    const detail = err.message;
    if (status === 429) {
      const retryAfter = Number(err.headers?.get?.('retry-after'));
      return ApplicationFailure.create({
        message: `The model API is rate limiting requests (429): ${detail}`,
        type: FailureType.ModelUnavailable,
        nextRetryDelay: Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter * 1000 : undefined,
      });
    }
    if (status === 401 || status === 403) {
      return ApplicationFailure.nonRetryable(
        `The model API refused the credentials (${status}): ${detail}. Check OPENAI_API_KEY and that the key may use model "${model}".`,
        FailureType.ModelAuthFailed,
      );
    }
    if (status === 400 || status === 404 || status === 422) {
      const code = (err as { code?: string | null }).code;
      const hint =
        code === 'context_length_exceeded'
          ? 'The conversation is longer than the model\'s context window: lower the window size or use a model with a larger context.'
          : status === 404
            ? `Check MODEL_NAME ("${model}") and OPENAI_BASE_URL.`
            : 'The request was rejected as invalid; check the model name, the tool schemas and the message sequence.';
      return ApplicationFailure.nonRetryable(`The model API rejected the request (${status}${code ? ` ${code}` : ''}): ${detail}. ${hint}`, FailureType.ModelRequestInvalid);
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
