import { Context } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { WorkflowStreamClient } from '@temporalio/workflow-streams/client';
import OpenAI from 'openai';
import type { ChatCompletionChunk, ChatCompletionCreateParamsStreaming } from 'openai/resources/chat/completions';
import type { AgentEvent } from '../workflows/events';
import { FailureType } from '../workflows/failure-types';
import { EVENTS_TOPIC } from '../workflows/messages';
import type { ToolCall } from '../workflows/chat-message';
import type { CallModelInput, CallModelResult } from './activity-types';

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

interface PartialCall {
  id: string;
  name: string;
  arguments: string;
}

export function createModelActivities(deps: ModelActivityDeps) {
  return {
    async callModel(input: CallModelInput): Promise<CallModelResult> {
      const ctx = Context.current();
      const model = input.model.name ?? deps.defaultModel;
      const publisher = WorkflowStreamClient.fromWithinActivity({ batchInterval: deps.deltaBatchMs ?? 50 });
      const events = publisher.topic<AgentEvent>(EVENTS_TOPIC);
      const attempt = ctx.info.attempt;
      const beat = setInterval(() => ctx.heartbeat(), 500);
      ctx.heartbeat();

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
      const calls = new Map<number, PartialCall>();
      let finishReason: string | null = null;
      let usage: CallModelResult['usage'] = null;
      try {
        const stream = await deps.openai.chat.completions.create(params, {
          signal: ctx.cancellationSignal,
          headers: { 'x-session-id': input.sessionId },
          maxRetries: 0,
        });
        for await (const chunk of stream as AsyncIterable<ChatCompletionChunk>) {
          ctx.heartbeat();
          if (chunk.usage) usage = { promptTokens: chunk.usage.prompt_tokens, completionTokens: chunk.usage.completion_tokens };
          const choice = chunk.choices[0];
          if (!choice) continue;
          const delta = choice.delta;
          if (delta.content) {
            content += delta.content;
            events.publish({
              type: 'text_delta',
              sessionId: input.sessionId,
              at: new Date().toISOString(),
              turnId: input.turnId,
              step: input.step,
              attempt,
              delta: delta.content,
            });
          }
          for (const tc of delta.tool_calls ?? []) {
            const entry = calls.get(tc.index) ?? { id: '', name: '', arguments: '' };
            if (tc.id) entry.id = tc.id;
            if (tc.function?.name) entry.name += tc.function.name;
            if (tc.function?.arguments) entry.arguments += tc.function.arguments;
            calls.set(tc.index, entry);
          }
          if (choice.finish_reason) finishReason = choice.finish_reason;
        }
        if (finishReason === null) {
          throw ApplicationFailure.retryable('The model stream ended before the model finished its answer.', FailureType.ModelUnavailable);
        }
        await publisher.flush();
      } catch (err) {
        if (ctx.cancellationSignal.aborted) {
          // Deltas already streamed must reach the workflow before it learns of the cancellation: it keeps them as the partial answer.
          await publisher.flush().catch(() => undefined);
          throw new CancelledFailure('model call interrupted');
        }
        throw err instanceof ApplicationFailure ? err : classifyModelError(err, model);
      } finally {
        clearInterval(beat);
        await publisher[Symbol.asyncDispose]().catch(() => undefined);
      }

      const toolCalls: ToolCall[] = [...calls.entries()]
        .sort(([a], [b]) => a - b)
        .map(([index, c]) => ({
          id: c.id || `call_${input.turnId}_${input.step}_${index}`,
          type: 'function' as const,
          function: { name: c.name, arguments: c.arguments },
        }));
      return { content: content === '' ? null : content, toolCalls, finishReason, usage };
    },
  };
}
