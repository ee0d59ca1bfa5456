import { Context } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { WorkflowStreamClient } from '@temporalio/workflow-streams/client';
import OpenAI from 'openai';
import type { ChatCompletionChunk, ChatCompletionCreateParamsStreaming } from 'openai/resources/chat/completions';
import type { AgentEvent, TextDeltaEvent } from '../workflows/events';
import { FailureType } from '../workflows/failure-types';
import { EVENTS_TOPIC } from '../workflows/messages';
import type { CallModelInput, CallModelResult } from './activity-types';
import { StreamedToolCalls } from './streamed-tool-calls';

export interface ModelActivityDeps {
  openai: OpenAI;
  defaultModel: string;
  /** How often deltas are flushed to the session's event stream. */
  deltaBatchMs?: number;
}

/** Maps an error from the openai SDK to a failure the retry policy understands. */
export function classifyModelError(err: unknown, model: string): ApplicationFailure {
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
    return ApplicationFailure.retryable(`The model API failed (${status}): ${detail}`, FailureType.ModelUnavailable);
  }
  const message = err instanceof Error ? err.message : String(err);
  return ApplicationFailure.retryable(`Could not reach the model API: ${message}`, FailureType.ModelUnavailable);
}

/** No heartbeat before this: a quick model call then costs the server no heartbeat write. */
const FIRST_HEARTBEAT_AFTER_MS = 200;
const HEARTBEAT_EVERY_MS = 200;

/**
 * Text deltas on their way to the session's event stream. Deltas wait in a
 * batch for `batchMs`; a batch that fills in time is signalled to the
 * workflow (through a workflow-streams publisher, made on first use). The
 * batch still open when the model finishes is handed back with the result
 * instead, so a quick answer costs no signal and no extra workflow task.
 */
class DeltaRelay {
  private batch: TextDeltaEvent[] = [];
  private timer: NodeJS.Timeout | undefined;
  private publisher: WorkflowStreamClient | undefined;
  private sending: Promise<void> = Promise.resolve();

  constructor(private readonly batchMs: number) {}

  add(event: TextDeltaEvent): void {
    this.batch.push(event);
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      this.sending = this.sending.then(() => this.send());
    }, this.batchMs);
  }

  private async send(): Promise<void> {
    if (this.batch.length === 0) return;
    this.publisher ??= WorkflowStreamClient.fromWithinActivity({ batchInterval: 60_000 });
    const events = this.publisher.topic<AgentEvent>(EVENTS_TOPIC);
    for (const event of this.batch.splice(0)) events.publish(event);
    await this.publisher.flush();
  }

  /** The model finished: waits for batches already sent and returns the open one. */
  async finish(): Promise<TextDeltaEvent[]> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.sending;
    await this.close();
    return this.batch.splice(0);
  }

  /** The call ends without a result (cancelled or failed): everything streamed goes out now. */
  async drain(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.sending.catch(() => undefined);
    await this.send();
    await this.close();
  }

  async close(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const publisher = this.publisher;
    this.publisher = undefined;
    if (publisher) await publisher[Symbol.asyncDispose]();
  }
}

export function createModelActivities(deps: ModelActivityDeps) {
  return {
    async callModel(input: CallModelInput): Promise<CallModelResult> {
      const ctx = Context.current();
      const model = input.model.name ?? deps.defaultModel;
      const relay = new DeltaRelay(deps.deltaBatchMs ?? 50);
      const attempt = ctx.info.attempt;
      const startedAt = performance.now();
      // Liveness and cancellation delivery both ride on heartbeats; a call that ends within
      // FIRST_HEARTBEAT_AFTER_MS sends none (an interrupt then finds the step already done).
      const heartbeat = (): void => {
        if (performance.now() - startedAt >= FIRST_HEARTBEAT_AFTER_MS) ctx.heartbeat();
      };
      const beat = setInterval(heartbeat, HEARTBEAT_EVERY_MS);

      const params: ChatCompletionCreateParamsStreaming = {
        model,
        messages: input.messages as ChatCompletionCreateParamsStreaming['messages'],
        stream: true,
        stream_options: { include_usage: true },
        ...(input.tools.length > 0
          ? { tools: input.tools.map((t) => ({ type: 'function' as const, function: t })), parallel_tool_calls: true }
          : {}),
        ...(input.model.temperature !== undefined ? { temperature: input.model.temperature } : {}),
      };

      let content = '';
      const calls = new StreamedToolCalls();
      let finishReason: string | null = null;
      let usage: CallModelResult['usage'] = null;
      let unpublished: TextDeltaEvent[];
      try {
        const stream = await deps.openai.chat.completions.create(params, {
          signal: ctx.cancellationSignal,
          headers: { 'x-session-id': input.sessionId },
          maxRetries: 0,
        });
        for await (const chunk of stream as AsyncIterable<ChatCompletionChunk>) {
          heartbeat();
          if (chunk.usage) usage = { promptTokens: chunk.usage.prompt_tokens, completionTokens: chunk.usage.completion_tokens };
          const choice = chunk.choices[0];
          if (!choice) continue;
          const delta = choice.delta;
          if (delta.content) {
            content += delta.content;
            relay.add({
              type: 'text_delta',
              sessionId: input.sessionId,
              at: new Date().toISOString(),
              turnId: input.turnId,
              step: input.step,
              attempt,
              delta: delta.content,
            });
          }
          calls.add(delta.tool_calls);
          if (choice.finish_reason) finishReason = choice.finish_reason;
        }
        if (finishReason === null) {
          throw ApplicationFailure.retryable('The model stream ended before the model finished its answer.', FailureType.ModelUnavailable);
        }
        unpublished = await relay.finish();
      } catch (err) {
        // Deltas already streamed must reach the workflow before it learns of a cancellation:
        // it keeps them as the partial answer. A failed attempt's deltas go out too, marked by attempt.
        await relay.drain().catch(() => undefined);
        if (ctx.cancellationSignal.aborted) throw new CancelledFailure('model call interrupted');
        throw err instanceof ApplicationFailure ? err : classifyModelError(err, model);
      } finally {
        clearInterval(beat);
        await relay.close().catch(() => undefined);
      }

      const toolCalls = calls.list((index) => `call_${input.turnId}_${input.step}_${index}`);
      return { content: content === '' ? null : content, toolCalls, finishReason, usage, ...(unpublished.length > 0 ? { unpublished } : {}) };
    },
  };
}
