import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { ChatCompletionChunk, ChatCompletionCreateParamsStreaming } from 'openai/resources/chat/completions';
import { FailureType } from '../workflows/failure-types';
import { textDeltasSignal } from '../workflows/messages';
import { MODEL_OUTPUT_LIMITS, TEXT_DELTAS_PER_SIGNAL } from '../workflows/model-output-limits';
import type { CallModelInput, CallModelResult, HoldPromptPartsInput } from './activity-types';
import { estimatedUsage, measuredModelCall, ModelPurpose, usageOf, type ModelCallDeps, type ModelUsage } from './model-call';
import { boundToolCalls } from './model-output-bounds';
import { StreamedToolCalls } from './streamed-tool-calls';
import type { PromptPartResolver } from './prompt-part-resolver';
import { PROMPT_PART_MISSING } from '../workflows/prompt-parts';

export interface ModelActivityDeps extends ModelCallDeps {
  defaultModel: string;
  /** How often deltas are flushed to the session's event stream. */
  deltaBatchMs?: number;
  /** Resolves prompt parts sent by reference (this worker's memory, then the run's history); a call by reference fails without it. */
  promptParts?: PromptPartResolver;
}

/** No heartbeat before this: a quick model call then costs the server no heartbeat write. */
const FIRST_HEARTBEAT_AFTER_MS = 200;
const HEARTBEAT_EVERY_MS = 200;

/** Each batch a call has sent adds this much to the wait before the next one. */
export const DELTA_BATCH_GROWTH_MS = 5;
/** The longest a delta waits for its batch. */
export const DELTA_BATCH_MAX_MS = 2_000;

/**
 * How long the next batch gathers deltas, once `sent` batches have gone:
 * `baseMs` at first, then 5 ms more for each batch sent, up to 2 s. Every
 * batch is a signal, and every signal costs the run a history event and a
 * workflow task (four events in all). At a flat 50 ms a streamed answer
 * wrote about 66 events a second: a slow model's long answer (100,000
 * characters at 80 a second is 21 minutes) would pass the server's 51,200
 * events in one turn, and the server would end the run, turn and all. Now
 * a minute of streaming takes about 155 batches, and 21 minutes about 830.
 */
export function deltaBatchDelayMs(baseMs: number, sent: number): number {
  return Math.max(baseMs, Math.min(sent * DELTA_BATCH_GROWTH_MS, DELTA_BATCH_MAX_MS));
}

/**
 * Text deltas on their way to the session's event stream. Deltas wait in a
 * batch for `batchMs` at first, longer as the call goes on
 * (`deltaBatchDelayMs`); a batch that fills in time is sent to the workflow as
 * a `textDeltas` signal, which the workflow checks and publishes itself (only
 * the workflow publishes events). The batch still open when the model
 * finishes is handed back with the result instead, so a quick answer costs
 * no signal and no extra workflow task.
 */
export class DeltaRelay {
  private batch: string[] = [];
  private timer: NodeJS.Timeout | undefined;
  private sending: Promise<void> = Promise.resolve();
  private seq = 0;

  constructor(
    private readonly batchMs: number,
    private readonly target: { turnId: string; step: number; attempt: number },
  ) {}

  add(delta: string): void {
    this.batch.push(delta);
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      // Streamed text is best effort: a signal that fails (the run ended, the server out of reach) loses its batch,
      // not the call. Left unhandled until finish(), the rejection ended the worker process.
      this.sending = this.sending.then(() => this.send()).catch((err: unknown) => this.failed(err));
    }, deltaBatchDelayMs(this.batchMs, this.seq));
  }

  private reported = false;

  private failed(err: unknown): void {
    if (this.reported) return;
    this.reported = true;
    Context.current().log.warn('Streamed text could not be signalled to the session: that batch is missing from its event stream (the call\'s whole text still comes with its result)', {
      error: err instanceof Error ? err.message.slice(0, 500) : String(err).slice(0, 500),
    });
  }

  private async send(): Promise<void> {
    const ctx = Context.current();
    const workflowId = ctx.info.workflowExecution?.workflowId;
    if (!workflowId) throw new Error('callModel runs only inside a session workflow');
    const handle = ctx.client.workflow.getHandle(workflowId);
    // What the batch holds now; deltas that arrive while it is signalled wait for the next batch's timer.
    // Sending them in the same loop sent one signal per round trip whatever the schedule, for as long as
    // the model streamed faster than a signal took (a worker far from its server).
    const deltas = this.batch.splice(0);
    for (let i = 0; i < deltas.length; i += TEXT_DELTAS_PER_SIGNAL) {
      this.seq += 1;
      await handle.signal(textDeltasSignal, { ...this.target, seq: this.seq, deltas: deltas.slice(i, i + TEXT_DELTAS_PER_SIGNAL).map((delta) => ({ delta })) });
    }
  }

  /** The model finished: waits for batches already sent and returns the open one. */
  async finish(): Promise<string[]> {
    this.stop();
    await this.sending;
    return this.batch.splice(0);
  }

  /** The call ends without a result (cancelled or failed): everything streamed goes out now. */
  async drain(): Promise<void> {
    this.stop();
    await this.sending.catch(() => undefined);
    await this.send();
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}

/**
 * Past what a step keeps: the text at its limit, tool calls well past
 * theirs (four times the arguments all calls may keep, or twice the calls),
 * or reasoning past four times the text's limit. The margin lets the bounds
 * report how far over a call went.
 */
export function pastWhatIsKept(content: string, calls: StreamedToolCalls, reasoningChars = 0): boolean {
  // Reasoning is not kept at all; a reasoning model in a loop streamed it for the whole activity timeout, every attempt.
  if (content.length >= MODEL_OUTPUT_LIMITS.maxTextChars || reasoningChars > 4 * MODEL_OUTPUT_LIMITS.maxTextChars) return true;
  const { calls: count, argumentChars } = calls.size;
  return count > 2 * MODEL_OUTPUT_LIMITS.maxToolCalls || argumentChars > 4 * MODEL_OUTPUT_LIMITS.maxTotalArgumentChars;
}

/** What a streamed step brought back, before its tool calls are bounded. */
interface StreamedStep {
  content: string;
  calls: StreamedToolCalls;
  finishReason: string;
  unpublished: string[];
  reasoningChars: number;
  stoppedReading: boolean;
}

/** Heartbeats every HEARTBEAT_EVERY_MS from FIRST_HEARTBEAT_AFTER_MS on; `beat` sends one now if that time has come. */
function heartbeats(ctx: Context): { beat(): void; stop(): void } {
  const startedAt = performance.now();
  const beat = (): void => {
    if (performance.now() - startedAt >= FIRST_HEARTBEAT_AFTER_MS) ctx.heartbeat();
  };
  const timer = setInterval(beat, HEARTBEAT_EVERY_MS);
  return { beat, stop: () => clearInterval(timer) };
}

export function createModelActivities(deps: ModelActivityDeps) {
  return {
    async callModel(input: CallModelInput): Promise<CallModelResult> {
      const ctx = Context.current();
      // Liveness and cancellation delivery both ride on heartbeats; a call that ends within
      // FIRST_HEARTBEAT_AFTER_MS sends none (an interrupt then finds the step already done).
      const heartbeat = heartbeats(ctx);
      try {
        // Heartbeating already: reading a long history for prompt parts must not look like a dead worker.
        const prompt = await promptOf(input);
        return await streamStep(ctx, input, prompt, heartbeat.beat);
      } finally {
        heartbeat.stop();
      }
    },

    async holdPromptParts(input: HoldPromptPartsInput): Promise<void> {
      const run = Context.current().info.workflowExecution;
      // Without a resolver the model call reads them from the run's history, where this input put them.
      if (deps.promptParts && run) deps.promptParts.hold(run, input.prompt.parts);
    },
  };

  /** The messages and tools to send: as given, or rebuilt from a prompt by reference. */
  async function promptOf(input: CallModelInput): Promise<{ messages: CallModelInput['messages']; tools: CallModelInput['tools'] }> {
    if (!input.prompt) return { messages: input.messages, tools: input.tools };
    const { info } = Context.current();
    const run = info.workflowExecution;
    if (!deps.promptParts || !run) {
      throw ApplicationFailure.nonRetryable('This worker keeps no prompt parts; the session sends the whole prompt again.', PROMPT_PART_MISSING);
    }
    return deps.promptParts.resolve(run, input.prompt);
  }

  /** One ReAct step: the model's answer streamed, its text relayed to the session as it comes. */
  function streamStep(ctx: Context, input: CallModelInput, prompt: Awaited<ReturnType<typeof promptOf>>, beat: () => void): Promise<CallModelResult> {
    // An empty name is no name, as the budget check reads it: the call is priced and recorded as the default model.
    const model = input.model.name || deps.defaultModel;
    const attempt = ctx.info.attempt;
    const params: ChatCompletionCreateParamsStreaming = {
      model,
      messages: prompt.messages as ChatCompletionCreateParamsStreaming['messages'],
      stream: true,
      stream_options: { include_usage: true },
      ...(prompt.tools.length > 0
        ? { tools: prompt.tools.map((t) => ({ type: 'function' as const, function: t })), parallel_tool_calls: true }
        : {}),
      ...(input.model.temperature !== undefined ? { temperature: input.model.temperature } : {}),
    };
    const spec = { purpose: ModelPurpose.Step, model, temperature: input.model.temperature, sessionId: input.sessionId, namespace: input.namespace };

    return measuredModelCall(
      deps,
      spec,
      async ({ requestOptions, firstToken }) => {
        const relay = new DeltaRelay(deps.deltaBatchMs ?? 50, { turnId: input.turnId, step: input.step, attempt });
        let content = '';
        let reasoningChars = 0;
        let stoppedReading = false;
        const calls = new StreamedToolCalls();
        let finishReason: string | null = null;
        let usage: ModelUsage | null = null;
        try {
          const stream = await deps.openai.chat.completions.create(params, requestOptions);
          for await (const chunk of stream as AsyncIterable<ChatCompletionChunk>) {
            beat();
            // The last usage that holds counts; a later chunk with broken counts does not erase a good one.
            const reported = chunk.usage ? usageOf(chunk.usage) : null;
            if (reported) usage = reported;
            const choice = Array.isArray(chunk.choices) ? chunk.choices[0] : undefined;
            if (!choice) continue;
            const delta = choice.delta ?? {};
            // Text as the server sent it only when it is text: a list or an object would reach the events and the window.
            const text = typeof delta.content === 'string' ? delta.content : '';
            // Reasoning some servers stream beside the answer (DeepSeek's and vLLM's reasoning_content, others'
            // reasoning): not part of the answer, counted so an answer that is all reasoning can say so.
            const { reasoning_content: thought, reasoning } = delta as { reasoning_content?: unknown; reasoning?: unknown };
            if (typeof thought === 'string') reasoningChars += thought.length;
            else if (typeof reasoning === 'string') reasoningChars += reasoning.length;
            if (text || delta.tool_calls?.length) firstToken();
            if (text && content.length < MODEL_OUTPUT_LIMITS.maxTextChars) {
              // Past the limit the rest of the answer is dropped here, before it reaches history or events.
              const piece = text.slice(0, MODEL_OUTPUT_LIMITS.maxTextChars - content.length);
              content += piece;
              relay.add(piece);
            }
            calls.add(delta.tool_calls);
            const reason: unknown = choice.finish_reason;
            if (typeof reason === 'string' && reason !== '') finishReason = reason;
            if (pastWhatIsKept(content, calls, reasoningChars)) {
              // A model stuck in a loop (a server with no output limit of its own) streamed on for the whole
              // activity timeout, six attempts, for text that is dropped here: stop reading, as a length stop.
              finishReason = 'length';
              stoppedReading = true;
              break;
            }
          }
          if (finishReason === null) {
            throw ApplicationFailure.retryable('The model stream ended before the model finished its answer.', FailureType.ModelUnavailable);
          }
          const unpublished = await relay.finish();
          // No usable usage reported: counted from characters rather than not at all (model-call.ts).
          usage ??= estimatedUsage(
            JSON.stringify(params.messages).length + (params.tools ? JSON.stringify(params.tools).length : 0),
            content.length + calls.list((index) => `call_${index}`).reduce((n, c) => n + c.function.name.length + c.function.arguments.length, 0),
          );
          return { value: { content, calls, finishReason, unpublished, reasoningChars, stoppedReading } satisfies StreamedStep, usage, finishReason };
        } catch (err) {
          // Deltas already streamed must reach the workflow before it learns of a cancellation:
          // it keeps them as the partial answer. A failed attempt's deltas go out too, marked by attempt.
          await relay.drain().catch(() => undefined);
          throw err;
        } finally {
          relay.stop();
        }
      },
      ({ value, usage }) => {
        const { toolCalls, truncatedArguments, droppedToolCalls } = boundToolCalls(value.calls.list((index) => `call_${input.turnId}_${input.step}_${index}`));
        return {
          content: value.content === '' ? null : value.content,
          toolCalls,
          finishReason: value.finishReason,
          usage,
          attempt,
          ...(value.unpublished.length > 0 ? { unpublishedDeltas: value.unpublished } : {}),
          ...(truncatedArguments.length > 0 ? { truncatedArguments } : {}),
          ...(droppedToolCalls > 0 ? { droppedToolCalls } : {}),
          ...(value.reasoningChars > 0 ? { reasoningChars: value.reasoningChars } : {}),
          ...(value.stoppedReading ? { stoppedReading: true } : {}),
        };
      },
    );
  }
}
