import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { Context } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import type OpenAI from 'openai';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { countMetric, observeMetric } from './metrics';
import { classifyModelError } from './model-errors';
import { FailureType } from '../workflows/failure-types';
import type { UsageStore } from './usage/usage-store';

/*
 * The one path every chat model request of the worker takes, whatever it is
 * for: a GenAI client span, the model metrics (attempts, calls, errors, time
 * to first token, latency, tokens), and the call's usage for cost and budgets.
 */

/** What a model call is for; its metrics, usage record and span say so. */
export const ModelPurpose = {
  /** A ReAct step of a turn (callModel). */
  Step: 'step',
  /** Folding evicted turns into the session summary (summarizeTurns). */
  Summary: 'summary',
  /** Long-term memory candidates from a session's turns (extractMemories). */
  Extraction: 'extraction',
} as const;
export type ModelPurpose = (typeof ModelPurpose)[keyof typeof ModelPurpose];

export interface ModelUsage {
  promptTokens: number;
  completionTokens: number;
  /** Counted from characters: the server reported no usable usage. */
  estimated?: boolean;
}

export interface ModelCallDeps {
  openai: OpenAI;
  /** Where each call's tokens are recorded, per tenant, user and session. */
  usage?: UsageStore;
  /** Takes configured secrets out of text that leaves the activity by another way than its failure (the trace's span). */
  redact?: (text: string) => string;
}

export interface ModelCallSpec {
  purpose: ModelPurpose;
  model: string;
  temperature?: number;
  sessionId: string;
  /**
   * Whose tokens these are. Without it (an activity scheduled by a run from
   * before it was passed) the call is measured but not recorded as usage.
   */
  namespace?: { tenant: string; user: string };
  /** Aborts the request; the activity's cancellation signal when absent. */
  signal?: AbortSignal;
}

/** What one attempt's request brings back. */
export interface ModelAnswer<R> {
  value: R;
  usage: ModelUsage | null;
  finishReason: string | null;
}

/** Given to the request of each attempt. */
export interface ModelAttempt {
  /** Options for the openai SDK: the session's lane header, the abort signal, and no SDK retries (Temporal retries the activity). */
  requestOptions: { signal?: AbortSignal; headers: Record<string, string>; maxRetries: 0 };
  /** The first streamed token arrived (time to first token). */
  firstToken(): void;
}

const tracer = trace.getTracer('durable-agent');

function activityContext(): Context | undefined {
  try {
    return Context.current();
  } catch {
    // Called outside an activity (tests, tools run in process): nothing retries it, and there is no run to key usage by.
    return undefined;
  }
}

/**
 * Sends one model request and measures it. `request` talks to the model;
 * `accept` turns its answer into the result, and may refuse it (output that
 * does not parse): that fails the attempt like a model error would. An
 * attempt ends ok, error or cancelled; the call (one scheduled activity, its
 * retries included) ends with the attempt that succeeds, the failure no retry
 * follows (not retryable, or the retry policy's last attempt), or a
 * cancellation.
 */
export function measuredModelCall<R, T>(
  deps: ModelCallDeps,
  spec: ModelCallSpec,
  request: (attempt: ModelAttempt) => Promise<ModelAnswer<R>>,
  accept: (answer: ModelAnswer<R>) => T,
): Promise<T> {
  const activity = activityContext();
  const signal = spec.signal ?? activity?.cancellationSignal;
  const purpose = { purpose: spec.purpose };
  // A GenAI client span (OpenTelemetry semantic conventions), child of the activity's span when tracing is on.
  return tracer.startActiveSpan(
    `chat ${spec.model}`,
    {
      kind: SpanKind.CLIENT,
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.system': 'openai',
        'gen_ai.request.model': spec.model,
        ...(spec.temperature !== undefined ? { 'gen_ai.request.temperature': spec.temperature } : {}),
        'server.address': safeHost(deps.openai.baseURL),
        'durable_agent.model.purpose': spec.purpose,
      },
    },
    async (span) => {
      const startedAt = performance.now();
      let firstTokenSeen = false;
      try {
        const answer = await request({
          requestOptions: { headers: { 'x-session-id': spec.sessionId }, maxRetries: 0, ...(signal ? { signal } : {}) },
          firstToken() {
            if (firstTokenSeen) return;
            firstTokenSeen = true;
            observeMetric('modelTtft', (performance.now() - startedAt) / 1000, purpose);
          },
        });
        // The model's tokens are spent even when its answer is refused below.
        if (answer.usage) {
          countMetric('modelTokens', { ...purpose, direction: 'input' }, answer.usage.promptTokens);
          countMetric('modelTokens', { ...purpose, direction: 'output' }, answer.usage.completionTokens);
          span.setAttributes({ 'gen_ai.usage.input_tokens': answer.usage.promptTokens, 'gen_ai.usage.output_tokens': answer.usage.completionTokens });
        }
        span.setAttributes({ 'gen_ai.response.finish_reasons': [answer.finishReason ?? 'unknown'], 'gen_ai.response.model': spec.model });
        const result = accept(answer);
        countMetric('modelAttempts', { ...purpose, outcome: 'ok' });
        countMetric('modelCalls', { ...purpose, outcome: 'ok' });
        observeMetric('modelSeconds', (performance.now() - startedAt) / 1000, purpose);
        if (answer.usage) recordUsage(deps, spec, answer.usage, activity);
        return result;
      } catch (err) {
        const failure = attemptFailed(err, deps, spec, signal, activity);
        // The span goes to the trace backend straight from here, before the activity's failure is redacted.
        span.setStatus({ code: SpanStatusCode.ERROR, message: (deps.redact ?? String)(failure.message).slice(0, 200) });
        span.setAttribute('error.type', (failure as { type?: string }).type ?? failure.name);
        throw failure;
      } finally {
        span.end();
      }
    },
  );
}

/** Counts a failed or cancelled attempt (and the call, when nothing retries it) and returns what the activity throws. */
function attemptFailed(err: unknown, deps: ModelCallDeps, spec: ModelCallSpec, signal: AbortSignal | undefined, activity: Context | undefined): ApplicationFailure | CancelledFailure {
  const purpose = { purpose: spec.purpose };
  const details = activity?.cancellationDetails;
  if (signal?.aborted && !details?.timedOut) {
    countMetric('modelAttempts', { ...purpose, outcome: 'cancelled' });
    // A worker shutting down hands the attempt back to the server, which retries it: the call goes on.
    if (!details?.workerShutdown) countMetric('modelCalls', { ...purpose, outcome: 'cancelled' });
    return new CancelledFailure('model call interrupted');
  }
  const failure = signal?.aborted
    ? ApplicationFailure.retryable(`The model call to "${spec.model}" ran out of time.`, 'Timeout')
    : err instanceof ApplicationFailure
      ? err
      : classifyModelError(err, spec.model, deps.openai.baseURL);
  countMetric('modelAttempts', { ...purpose, outcome: 'error' });
  countMetric('modelErrors', { ...purpose, class: failure.type ?? 'Unknown' });
  if (endsTheCall(failure, activity)) countMetric('modelCalls', { ...purpose, outcome: 'error' });
  return failure;
}

/** Whether no retry follows this failed attempt: not retryable, or the retry policy's last attempt. */
function endsTheCall(failure: ApplicationFailure, activity: Context | undefined): boolean {
  if (!activity) return true;
  if (failure.nonRetryable) return true;
  const policy = activity.info.retryPolicy;
  if (failure.type && policy?.nonRetryableErrorTypes?.includes(failure.type)) return true;
  const maximumAttempts = policy?.maximumAttempts ?? 0;
  return maximumAttempts > 0 && activity.info.attempt >= maximumAttempts;
}

/** One usage record per scheduled activity (`<workflowId>/<runId>/<activityId>`): a retried activity writes nothing twice. */
function recordUsage(deps: ModelCallDeps, spec: ModelCallSpec, usage: ModelUsage, activity: Context | undefined): void {
  const run = activity?.info.workflowExecution;
  if (!deps.usage || !spec.namespace || !activity || !run) return;
  deps.usage.recordBehind(
    {
      id: `${run.workflowId}/${run.runId}/${activity.info.activityId}`,
      tenant: spec.namespace.tenant,
      user: spec.namespace.user,
      sessionId: spec.sessionId,
      model: spec.model,
      purpose: spec.purpose,
      at: new Date(),
      inputTokens: usage.promptTokens,
      outputTokens: usage.completionTokens,
    },
    (err) => activity.log.warn('could not record a model call\'s usage', { purpose: spec.purpose, error: err instanceof Error ? err.message : String(err) }),
  );
}

/**
 * More tokens than any model's one call can take: a count past it is no
 * count. One bogus chunk (`prompt_tokens: 9e15`) would spend a tenant's day.
 */
export const MAX_TOKENS_PER_CALL = 10_000_000;

/** A token count as a model server reports it: a whole number, 0 or more, and plausible; anything else is no count. */
const isTokenCount = (n: unknown): n is number => typeof n === 'number' && Number.isSafeInteger(n) && n >= 0 && n <= MAX_TOKENS_PER_CALL;

/**
 * Tokens estimated from characters (four a token, rounded up), for a call
 * whose server reported no usable usage: without it the call would be free
 * for every budget and missing from every total.
 */
export function estimatedUsage(promptChars: number, outputChars: number): ModelUsage {
  return { promptTokens: Math.ceil(promptChars / 4), completionTokens: Math.ceil(outputChars / 4), estimated: true };
}

/**
 * The usage a model server reported, when both counts are token counts;
 * otherwise none (as if it had not reported any). A negative, fractional or
 * textual count would otherwise give tokens back to a budget, or turn the
 * day's total into text.
 */
export function usageOf(usage: { prompt_tokens?: unknown; completion_tokens?: unknown } | null | undefined): ModelUsage | null {
  if (!usage || !isTokenCount(usage.prompt_tokens) || !isTokenCount(usage.completion_tokens)) return null;
  return { promptTokens: usage.prompt_tokens, completionTokens: usage.completion_tokens };
}

/**
 * A JSON answer, not streamed, through the measured path. `parse` runs inside
 * the attempt, so output that does not parse fails it (and is retried).
 */
export function completeJson<T>(deps: ModelCallDeps, spec: ModelCallSpec, messages: ChatCompletionMessageParam[], parse: (content: string | null) => T): Promise<T> {
  return measuredModelCall(
    deps,
    spec,
    async ({ requestOptions }) => {
      const res = await deps.openai.chat.completions.create(
        { model: spec.model, messages, response_format: { type: 'json_object' }, ...(spec.temperature !== undefined ? { temperature: spec.temperature } : {}) },
        requestOptions,
      );
      // A 200 whose body is not a completion (an error object, a proxy's page parsed as something else) has no
      // choices: that is the server's answer, not an unreachable server.
      const body = res as unknown as { choices?: unknown; error?: { message?: unknown } };
      if (!Array.isArray(body.choices)) {
        const said = typeof body.error?.message === 'string' ? `: ${body.error.message.slice(0, 500)}` : '';
        throw ApplicationFailure.retryable(`The model API answered 200 without a completion${said}`, FailureType.ModelUnavailable);
      }
      const choice = res.choices[0];
      const content = choice?.message?.content ?? null;
      return {
        value: content,
        usage: usageOf(res.usage) ?? estimatedUsage(JSON.stringify(messages).length, typeof content === 'string' ? content.length : 0),
        finishReason: choice?.finish_reason ?? null,
      };
    },
    (answer) => parse(answer.value),
  );
}

/** The model server's host for the span, never its path or credentials. */
function safeHost(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'unknown';
  }
}
