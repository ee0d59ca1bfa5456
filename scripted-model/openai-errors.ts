import type { ServerResponse } from 'node:http';
import { sendJson } from './http-io';

/** The error envelope every OpenAI endpoint uses; the SDK reads `code`, `param` and `type` from it. */
export interface OpenAiErrorBody {
  message: string;
  type: string;
  param: string | null;
  code: string | null;
}

export function sendOpenAiError(
  res: ServerResponse,
  status: number,
  error: OpenAiErrorBody,
  headers: Record<string, string> = {},
): void {
  sendJson(res, status, { error }, headers);
}

// The SDK retries 5xx and some 4xx when allowed to; a scripting mistake or a
// malformed request must fail on the first attempt, not after back-off.
const NO_RETRY = { 'x-should-retry': 'false' };

export function sendInvalidRequest(res: ServerResponse, message: string, param: string | null): void {
  sendOpenAiError(res, 400, { message, type: 'invalid_request_error', param, code: null }, NO_RETRY);
}

export function sendUnexpected(res: ServerResponse, message: string): void {
  const error = { message, type: 'scripted_model_error', param: null, code: 'unexpected_request' };
  sendOpenAiError(res, 500, error, NO_RETRY);
}

export function sendNotFound(res: ServerResponse, message: string): void {
  sendOpenAiError(res, 404, { message, type: 'invalid_request_error', param: null, code: 'unknown_url' }, NO_RETRY);
}

export function sendRateLimit(res: ServerResponse, retryAfterSeconds: number): void {
  sendOpenAiError(
    res,
    429,
    {
      message: `Rate limit reached for requests (scripted). Please try again in ${retryAfterSeconds}s.`,
      type: 'requests',
      param: null,
      code: 'rate_limit_exceeded',
    },
    { 'retry-after': String(retryAfterSeconds) },
  );
}

export function sendServerError(res: ServerResponse): void {
  sendOpenAiError(res, 500, {
    message: 'The server had an error while processing your request. Sorry about that! (scripted)',
    type: 'server_error',
    param: null,
    code: null,
  });
}

export function sendContextLength(res: ServerResponse, promptTokens: number, limitTokens: number): void {
  sendOpenAiError(res, 400, {
    message:
      `This model's maximum context length is ${limitTokens} tokens. However, your messages resulted in ` +
      `${promptTokens} tokens. Please reduce the length of the messages.`,
    type: 'invalid_request_error',
    param: 'messages',
    code: 'context_length_exceeded',
  });
}
