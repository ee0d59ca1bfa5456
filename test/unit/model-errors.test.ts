import OpenAI from 'openai';
import { classifyModelError, MAX_RETRY_AFTER_MS } from '../../activities/model-errors';

/** As the SDK makes them: from an HTTP answer with its `{ error }` body, or (no status) from an error event inside a stream. */
const apiError = (status: number | undefined, error: Record<string, unknown>, headers: Record<string, string> = {}) =>
  status === undefined ? new OpenAI.APIError(undefined, error, undefined, new Headers(headers)) : OpenAI.APIError.generate(status, { error }, undefined, new Headers(headers));

describe('model API errors, as the retry policy reads them', () => {
  it('a 429 that asks for a wait within a minute is retried after it; retry-after-ms and HTTP dates are read too', () => {
    expect(classifyModelError(apiError(429, { message: 'slow down' }, { 'retry-after': '7' }), 'm')).toMatchObject({ nonRetryable: false, nextRetryDelay: 7_000 });
    expect(classifyModelError(apiError(429, { message: 'slow down' }, { 'retry-after-ms': '1500' }), 'm')).toMatchObject({ nonRetryable: false, nextRetryDelay: 1_500 });
    const inTwenty = new Date(Date.now() + 20_000).toUTCString();
    const dated = classifyModelError(apiError(429, { message: 'slow down' }, { 'retry-after': inTwenty }), 'm');
    expect(dated.nextRetryDelay).toBeGreaterThan(15_000);
    expect(dated.nextRetryDelay).toBeLessThanOrEqual(20_000);
  });

  it('a 429 that asks for a day fails the call at once, saying how long, instead of parking the turn for a day per attempt', () => {
    const failure = classifyModelError(apiError(429, { message: 'quota resets tomorrow' }, { 'retry-after': '86400' }), 'm');
    expect(failure).toMatchObject({ nonRetryable: true, type: 'ModelUnavailable', nextRetryDelay: undefined });
    expect(failure.message).toContain(`asks to wait 86400 s, longer than a call waits (${MAX_RETRY_AFTER_MS / 1000} s)`);
  });

  it('quota and billing refusals (402, 429 insufficient_quota) and a 413 are not retried', () => {
    expect(classifyModelError(apiError(402, { message: 'pay up' }), 'm')).toMatchObject({ nonRetryable: true, type: 'ModelAuthFailed' });
    expect(classifyModelError(apiError(429, { message: 'You exceeded your current quota', code: 'insufficient_quota' }), 'm')).toMatchObject({ nonRetryable: true, type: 'ModelAuthFailed' });
    expect(classifyModelError(apiError(413, { message: 'too big' }), 'm')).toMatchObject({ nonRetryable: true, type: 'ModelRequestInvalid' });
  });

  it('an error event inside a stream is the server\'s error, not "could not reach": by its code when it is a status', () => {
    const inStream = classifyModelError(apiError(undefined, { message: 'model overloaded', type: 'server_error' }), 'm', 'http://model:8000/v1');
    expect(inStream).toMatchObject({ nonRetryable: false, type: 'ModelUnavailable' });
    expect(inStream.message).toBe('The model API at http://model:8000/v1 reported an error in its stream: model overloaded');
    expect(classifyModelError(apiError(undefined, { message: 'bad tool schema', code: 400 }), 'm')).toMatchObject({ nonRetryable: true, type: 'ModelRequestInvalid' });
  });
});
