import { ActivityCancellationType, ActivityFailure, ApplicationFailure, TemporalFailure, TimeoutFailure, condition, isCancellation, proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { ActivityOptions, RetryPolicy } from '@temporalio/common';
import type { SessionActivities, CallModelInput, CallModelResult, GetToolCatalogInput } from '../activities/activity-types';
import type { AssistantMessage, ChatMessage, ToolCall, ToolMessage } from './chat-message';
import type { EventEmitter } from './event-emitter';
import { FailureType, nonRetryableFailureTypes } from './failure-types';
import type { Actor } from './principal';
import type { PendingConfirmation, SessionOptions } from './session-types';
import { planToolCall, type SchemaDialect, type ToolCallPlan, type TruncatedCall } from './tool-call-plan';
import type { ToolPins } from './tool-pins';
import { toolErrorContent } from './tool-feedback';
import { checkCitations, citationCorrection } from './memory-citations';

/**
 * Unknown memory ids are removed from text that comes with tool calls too, and
 * citations are read in the full-width forms models also write
 * (`【mem:ab12】`). Asked only when such a citation is found.
 */
export const CITATIONS_CHECKED_EVERY_STEP = 'citations-checked-every-step';
/**
 * Citations are also read in parentheses and with ids joined by words (`(mem:ab12)`, `[mem:ab12 and mem:cd34]`):
 * runs from before let those through unchecked. Asked only when that reading finds more unknown ids.
 */
export const CITATION_FORMS_BROADENED = 'citation-forms-broadened';

/**
 * Tool arguments whose schema is too costly to check in the workflow (its
 * checks of one value would multiply past json-schema-check.ts
 * IN_PLACE_BUDGET) are left to the tool. Asked only for such a schema.
 */
export const COSTLY_SCHEMAS_UNCHECKED = 'costly-schemas-unchecked';

/**
 * `format: "url"` in a tool's schema is checked in linear time
 * (json-schema-check.ts LINEAR_URL_FORMAT), not with the validator's regular
 * expression, which took seconds for a 30-character host and froze the
 * session. Asked only for a schema with that format.
 */
export const URL_FORMAT_LINEAR = 'url-format-linear';

/**
 * A call to a tool that changed and waits for re-approval is checked against
 * the text the model was shown (the pinned one), or not at all when none was
 * kept, rather than the new schema: a rejection quoted the new schema (its
 * property names, its issues) to the model before any person approved it.
 * After approval the tool itself checks the arguments. Asked only for such a
 * call.
 */
export const CHANGED_TOOLS_CHECKED_AS_SHOWN = 'changed-tools-checked-as-shown';

/** Patch id: a step whose calls end in a cancellation waits for all of them before the turn ends. Asked only then. */
export const TOOL_CALLS_SETTLED = 'tool-calls-settled';
/**
 * An interrupt during a step's tool calls keeps what came of them: the calls that finished with their results,
 * the others with INTERRUPTED_CALL_RESULT (session-turn.ts keeps every answered call of the turn). Before, the
 * turn kept only its text, so the next turn's model never saw a write that had run, and did it again.
 */
export const INTERRUPT_KEEPS_RAN_CALLS = 'interrupt-keeps-ran-calls';
/** A model call's input over SAFE_PAYLOAD_BYTES sends its new prompt parts ahead (`holdPromptParts`), not failing the turn. */
export const PROMPT_PARTS_AHEAD = 'prompt-parts-ahead';
/** After a call refused as ToolChanged, the turn reads the tool catalog again before its next model call. */
export const CATALOG_READ_AFTER_TOOL_CHANGED = 'catalog-read-after-tool-changed';
/** How a ToolChanged result starts (toolErrorContent's JSON). */
const TOOL_CHANGED_CONTENT = `{"error":{"type":"${FailureType.ToolChanged}"`;
/** The last call of an answer cut short, with no arguments yet, is refused, not run with `{}`. */
export const CUT_CALL_NOT_RUN = 'cut-call-not-run';

/** The result a call of an interrupted step gets when it had not finished (cancelled, or waiting for a decision). */
export const INTERRUPTED_CALL_RESULT = '[runtime check] The turn was interrupted before this call finished: it may not have run, or it may have taken effect. Check before repeating it.';

import { previewValue } from './json-bounds';
import { MAX_TURN_TEXT_CHARS, MODEL_OUTPUT_LIMITS } from './model-output-limits';
import { payloadBytes, SAFE_PAYLOAD_BYTES } from './payload-budget';
import { CARRIED_STATE_HARD_BYTES } from './carried-state-budget';
import { isoAt, nowMs } from './workflow-clock';
import type { ToolCatalog, ToolSpec } from './tool-spec';
import type { ToolProgressGate } from './text-deltas';
import { uniqueCallIds } from './tool-call-ids';
import { MODEL_PROMPT_BY_REF, PROMPT_PART_MISSING, type PromptLedger } from './prompt-parts';
import { inBaseline, isPatched, RUNNING_TOOLS_AFTER_LAST_DECISION } from './patches';

/**
 * Patch id: an answer the server cut (`finish_reason` "length"), filtered
 * ("content_filter"), or one with neither text nor a tool call, is reported
 * with an `error` event that says so and what to do. The turn went on
 * without a word: a reasoning model that spent its whole output budget
 * thinking gave an empty answer, and a filtered one looked finished. Only
 * an event is added, but a new event can answer a waiting event poll in a
 * workflow task where the run did not, so it is asked only then.
 */
export const MODEL_FINISH_NOTED = 'model-finish-noted';

/**
 * Patch id: arguments emptied because the response's calls together were
 * over their budget are refused naming that budget, not one call's limit.
 * The text feeds the conversation's size, which decides when turns fold:
 * a worker from before, given a newer activity's result in a rolling
 * deploy, wrote the old text. Asked only for such a call.
 */
export const TRUNCATED_RESPONSE_NAMED = 'truncated-response-named';

/** What an answer's end says that the answer itself does not: the `error` event to publish, or undefined. */
export function finishNote(
  reply: Pick<CallModelResult, 'content' | 'toolCalls' | 'finishReason' | 'reasoningChars' | 'stoppedReading'>,
  /** Whether the turn's earlier steps gave text: an empty last step after them leaves the turn its answer. */
  turnHasText = false,
): { errorType: string; message: string } | undefined {
  const reason = reply.finishReason;
  const text = Boolean(reply.content?.trim());
  const calls = reply.toolCalls.length > 0;
  const empty = !text && !calls;
  const thought = reply.reasoningChars ? ` after ${reply.reasoningChars} characters of reasoning` : '';
  if (reason === 'content_filter') {
    return {
      errorType: FailureType.ModelOutputFiltered,
      message: `The model's provider filtered this answer (finish_reason "content_filter"): it may be cut short${empty ? ', and here it is empty' : ''}. Next step: rephrase the request, or check the provider's content policy.`,
    };
  }
  if (reply.stoppedReading) {
    return {
      errorType: FailureType.ModelOutputCut,
      message: `The session stopped reading the model's answer past what one step keeps (${MODEL_OUTPUT_LIMITS.maxTextChars} characters of text, ${4 * MODEL_OUTPUT_LIMITS.maxTextChars} of reasoning, or far more tool calls or arguments than a step takes)${thought}. Next step: ask for a shorter answer, or fewer tool calls at once.`,
    };
  }
  if (reason === 'length') {
    return {
      errorType: FailureType.ModelOutputCut,
      message: empty
        ? `The model stopped at its output limit${thought} before any answer (finish_reason "length"). Next step: raise the model's output limit (max tokens), or use a model that reasons less.`
        : `The model's answer stopped at its output limit (finish_reason "length"): ${[text ? 'the text may end mid-sentence' : '', calls ? "a tool call's arguments may be cut" : ''].filter(Boolean).join(', and ')}. Next step: raise the model's output limit (max tokens), or ask for a shorter answer.`,
    };
  }
  if (empty && !turnHasText) {
    return {
      errorType: FailureType.ModelOutputInvalid,
      message: `The model answered with neither text nor a tool call${thought} (finish_reason "${reason}"). Next step: send the message again, or use another model.`,
    };
  }
  return undefined;
}

// Every call passes its own options (timeouts, retries, a summary for the Web UI) through executeWithOptions.
const { callModel, executeTool, holdPromptParts } = proxyActivities<SessionActivities>({
  startToCloseTimeout: '1 minute',
});

// The catalog is read from the worker's memory: a local activity records it in history
// (so replay is deterministic when servers add tools) without a round trip to the server.
const { getToolCatalog, executeTool: executeToolLocally } = proxyLocalActivities<SessionActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { maximumAttempts: 5, initialInterval: '200 milliseconds' },
});

/**
 * Short read-only tools (timeout at most 2 s) run as local activities: same
 * timeout, retries and cancellation, recorded in history, but without the
 * round trip through the server's task queue, which is most of a step's
 * overhead. The bound matters: a signal (an interrupt) is handled only
 * between workflow tasks, and a local activity holds its task until it ends.
 * Side-effecting tools stay regular activities, so a worker crash mid-call is
 * detected by heartbeat and retried under the idempotency key.
 */
export const LOCAL_TOOL_MAX_TIMEOUT_MS = 2_000;
export const runsLocally = (spec: ToolSpec): boolean => spec.risk === 'read' && spec.timeoutMs <= LOCAL_TOOL_MAX_TIMEOUT_MS;

/**
 * Patch id: tool arguments are checked against the full JSON Schema dialect
 * (`$ref`, `oneOf` exclusivity...), with patterns checked by RE2 in the tool
 * activity rather than in the workflow. Runs that planned calls before it keep
 * the old checker, so the same calls are rejected on replay.
 */
export const TOOL_ARGS_FULL_JSON_SCHEMA = inBaseline('tool-args-full-json-schema');
/** A call's own risk (`externalWhen`) can hold it for confirmation; see withCallRisk. */
export const TOOL_RISK_PER_CALL = inBaseline('tool-risk-per-call');

/** Patch id: idempotency keys carry the step (see docs/safe-workflow-changes.md). */
export const IDEMPOTENCY_KEY_PER_STEP = inBaseline('idempotency-key-per-step');

/** What happened to one tool call, for the session's records. */
export interface ToolCallOutcome {
  toolCallId: string;
  toolName: string;
  status: 'ok' | 'failed' | 'declined' | 'rejected';
  /** Time the tool ran, retries included; the wait for a confirmation is apart, in `waitedMs`. */
  durationMs: number;
  waitedMs?: number;
  arguments: string;
  result: string;
  /** The failure type, when the call did not succeed (ToolTimeout, ToolDeclined, ...). */
  errorType?: string;
}

/** A decision on a risky call, once made. */
export interface Decision {
  approved: boolean;
  reason?: string;
  decidedBy: 'user' | 'timeout' | 'interrupt';
  /** The principal who decided (absent for timeouts, interrupts and decisions from before `principal-required`). */
  by?: Actor;
}

/** What the turn needs from the session around it. */
export interface TurnContext {
  sessionId: string;
  turnId: string;
  options: SessionOptions;
  events: EventEmitter;
  /** Messages sent to the model before this turn's own: system prompt and window. */
  prefix: ChatMessage[];
  /** This turn's messages, starting with the user's; the loop appends to it. */
  messages: ChatMessage[];
  onStep(step: number): void;
  /** A model call answered, on the given attempt. */
  onModelCall(attempt: number): void;
  /** A model call failed for good. */
  onModelFailure(): void;
  /** Running tool calls, whose progress signals are published. */
  progress: ToolProgressGate;
  /** Publishes text the model activity had not signalled yet, after what it had (checked like the signal). */
  publishDeltas(step: number, attempt: number, deltas: readonly string[]): void;
  onToolCall(record: ToolCallOutcome): void;
  /** Tools as this session pinned them (hash and text), updated on re-approval. */
  toolHashes: ToolPins;
  /** The run's prompt parts: model calls send inline what no completed call of the run carried yet, and ids for the rest. */
  prompts: PromptLedger;
  /** The catalog the run last read for an allow-list (its JSON as the key). */
  catalogs: TurnCatalogs;
  /** This turn's catalog, when its read started with the turn's other reads (patch `turn-start-together`); read at the loop's start otherwise. */
  catalog?: Promise<ToolCatalog>;
  /** Registers a pending confirmation and resolves with its decision. */
  awaitDecision(pending: PendingConfirmation): Promise<Decision>;
  /** The day's remaining budget, when one applies to the session's tenant or user. */
  budget?: TurnBudget;
  /** Memory ids injected this turn; present when the citation check is on. */
  citations?: { injectedIds: string[]; onFlag(unknownIds: string[], action: 'regenerated' | 'removed'): void };
  setActivity(activity: 'thinking' | 'running_tools' | 'awaiting_confirmation'): void;
  /** How many calls of the session wait for a person now. */
  decisionsPending?(): number;
}

export interface TurnLoopResult {
  text: string;
  modelCalls: number;
  toolCalls: number;
  hitStepLimit: boolean;
  /** Why the turn stopped before a model call: its tenant's or user's daily budget is spent. */
  budgetExceeded?: string;
}

/** What a turn may still spend (workflows/session-turn.ts builds it from the day's usage). */
export interface TurnBudget {
  /** A reason to stop before the next model call, or undefined to go on. */
  exhausted(): string | undefined;
  /** A model call's tokens, taken off what is left. */
  spend(usage: CallModelResult['usage']): void;
}

function modelFailureMessage(err: unknown): { type: string; message: string } {
  if (err instanceof ActivityFailure && err.cause instanceof ApplicationFailure) {
    return { type: err.cause.type ?? FailureType.ModelUnavailable, message: err.cause.message };
  }
  if (err instanceof ActivityFailure && err.cause instanceof TimeoutFailure) {
    return { type: FailureType.ModelUnavailable, message: 'The model did not answer in time.' };
  }
  return { type: FailureType.ModelUnavailable, message: err instanceof Error ? err.message : String(err) };
}

/**
 * Converts the failure of a tool activity into the text the model reads. A
 * regular activity's failure arrives wrapped in an ActivityFailure; a local
 * activity's may arrive as the bare cause.
 */
function toolFailureContent(err: unknown, spec: ToolSpec): { content: string; errorType: string } {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  if (cause instanceof TimeoutFailure) {
    const seconds = Math.round(spec.timeoutMs / 1000);
    return { errorType: FailureType.ToolTimeout, content: toolErrorContent(FailureType.ToolTimeout, `The tool did not finish within ${seconds} s.`) };
  }
  if (cause instanceof ApplicationFailure) {
    const type = cause.type ?? FailureType.ToolFailed;
    return { errorType: type, content: toolErrorContent(type, cause.message) };
  }
  const message = cause instanceof Error ? cause.message : String(cause);
  return { errorType: FailureType.ToolFailed, content: toolErrorContent(FailureType.ToolFailed, message) };
}

function preview(text: string, max = 200): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

export class ModelCallFailed extends Error {
  constructor(readonly errorType: string, message: string) {
    super(message);
  }
}

const MODEL_CALL_OPTIONS: ActivityOptions = {
  startToCloseTimeout: '3 minutes',
  heartbeatTimeout: '3 seconds',
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  retry: {
    initialInterval: '500 milliseconds',
    backoffCoefficient: 2,
    maximumInterval: '20 seconds',
    maximumAttempts: 6,
    nonRetryableErrorTypes: [...nonRetryableFailureTypes],
  },
};

const PARTS_AHEAD_OPTIONS: ActivityOptions = {
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '500 milliseconds', backoffCoefficient: 2, maximumInterval: '10 seconds', maximumAttempts: 6 },
};

const isPartMissing = (err: unknown): boolean =>
  err instanceof ActivityFailure && err.cause instanceof ApplicationFailure && err.cause.type === PROMPT_PART_MISSING;

/**
 * Schedules one model call: with the prompt by reference once the patch is
 * in (parts an earlier completed call of the run carried go as ids), or whole
 * for runs from before it. A part the activity cannot find fails the call at
 * once; it is then sent again whole.
 */
async function callModelFor(ctx: TurnContext, step: number, tools: CallModelInput['tools']): Promise<CallModelResult> {
  const { options, turnId, sessionId } = ctx;
  const whole: CallModelInput = {
    sessionId,
    turnId,
    step,
    messages: [...ctx.prefix, ...ctx.messages],
    tools,
    model: options.model,
    namespace: { tenant: options.namespace.tenant, user: options.namespace.user },
  };
  const schedule = async (input: CallModelInput, inputBytes = payloadBytes(input)): Promise<CallModelResult> => {
    if (inputBytes > SAFE_PAYLOAD_BYTES) {
      // Scheduling it would fail the workflow task at the server; fail the turn instead, saying why.
      ctx.onModelFailure();
      throw new ModelCallFailed(
        FailureType.ModelRequestInvalid,
        `The prompt for step ${step} is ${inputBytes} bytes, over the ${SAFE_PAYLOAD_BYTES}-byte limit for one activity input. Lower the session's window limits or shorten the system prompt.`,
      );
    }
    return callModel.executeWithOptions({ ...MODEL_CALL_OPTIONS, summary: `model step ${step} of turn ${turnId}` }, [input]);
  };
  if (!isPatched(MODEL_PROMPT_BY_REF)) return schedule(whole);
  const byRef = async (): Promise<CallModelResult> => {
    let { prompt, inline } = ctx.prompts.compact(whole.messages, whole.tools);
    let input: CallModelInput = { ...whole, messages: [], tools: [], prompt };
    let bytes = payloadBytes(input);
    // Over what one input takes (a window carried into a new run, a step of many long results): the parts go
    // ahead in inputs of their own, and the call names them. Runs from before failed the turn (asked only then).
    if (bytes > SAFE_PAYLOAD_BYTES && isPatched(PROMPT_PARTS_AHEAD)) {
      await sendPartsAhead(ctx, step, prompt.parts);
      ({ prompt, inline } = ctx.prompts.compact(whole.messages, whole.tools));
      input = { ...whole, messages: [], tools: [], prompt };
      bytes = payloadBytes(input);
    }
    const reply = await schedule(input, bytes);
    ctx.prompts.confirm(inline);
    return reply;
  };
  try {
    return await byRef();
  } catch (err) {
    if (!isPartMissing(err)) throw err;
    ctx.prompts.forget();
    return byRef();
  }
}

/** Parts one `holdPromptParts` input carries together, as JSON; one part larger than this goes alone. */
const PARTS_AHEAD_BYTES = 384 * 1024;

/**
 * Sends `parts` ahead of a model call, in inputs of at most PARTS_AHEAD_BYTES
 * (a single larger part alone, up to what the carried state may hold), and
 * counts each as sent once its input completed. A part over that stays
 * inline, and the call fails with the size it would have.
 */
async function sendPartsAhead(ctx: TurnContext, step: number, parts: Record<string, unknown>): Promise<void> {
  const chunks: Array<Record<string, unknown>> = [];
  let chunk: Record<string, unknown> = {};
  let bytes = 0;
  for (const [id, value] of Object.entries(parts)) {
    const size = payloadBytes(value) + id.length + 4;
    if (size > CARRIED_STATE_HARD_BYTES) continue;
    if (bytes > 0 && bytes + size > PARTS_AHEAD_BYTES) {
      chunks.push(chunk);
      chunk = {};
      bytes = 0;
    }
    chunk[id] = value;
    bytes += size;
  }
  if (bytes > 0) chunks.push(chunk);
  for (const [i, held] of chunks.entries()) {
    await holdPromptParts.executeWithOptions(
      { ...PARTS_AHEAD_OPTIONS, summary: `prompt parts ${i + 1} of ${chunks.length} for model step ${step} of turn ${ctx.turnId}` },
      [{ sessionId: ctx.sessionId, turnId: ctx.turnId, step, prompt: { parts: held } }],
    );
    ctx.prompts.confirm(Object.keys(held));
  }
}

export type TurnCatalogs = { held(allow: string): ToolCatalog | undefined; hold(allow: string, catalog: ToolCatalog): void };

/**
 * The tools this turn may offer. The run keeps the catalog it last read; the
 * worker answers `unchanged` when its digest is the same, so a turn costs
 * history a few bytes rather than every tool schema again. `input` is what
 * to ask the worker; `settle` takes its reply and returns the catalog.
 */
export function catalogRead(ctx: Pick<TurnContext, 'sessionId' | 'options' | 'catalogs'>): { input: GetToolCatalogInput; settle(reply: ToolCatalog): ToolCatalog } {
  const { sessionId, options } = ctx;
  const allow = JSON.stringify(options.toolPolicy.allow ?? null);
  const held = ctx.catalogs.held(allow);
  return {
    input: {
      sessionId,
      namespace: options.namespace,
      allow: options.toolPolicy.allow,
      ...(held?.digest ? { knownDigest: held.digest } : {}),
    },
    settle(reply) {
      const catalog = reply.unchanged && held ? held : reply;
      ctx.catalogs.hold(allow, catalog);
      return catalog;
    },
  };
}

/** The catalog read on its own, a local activity (runs without the patch `turn-reads-in-one`). */
export async function readCatalog(ctx: Pick<TurnContext, 'sessionId' | 'options' | 'catalogs'>): Promise<ToolCatalog> {
  const read = catalogRead(ctx);
  return read.settle(await getToolCatalog(read.input));
}

/** `planToolCall`, with a changed tool awaiting re-approval checked as the model was shown it (CHANGED_TOOLS_CHECKED_AS_SHOWN). */
function planAsShown(
  ctx: Pick<TurnContext, 'options' | 'toolHashes'>,
  call: ToolCall,
  tools: ReadonlyMap<string, ToolSpec>,
  truncated: TruncatedCall | undefined,
  dialect: SchemaDialect,
  check: Parameters<typeof planToolCall>[5],
): ToolCallPlan {
  const spec = tools.get(call.function.name);
  const awaiting = spec !== undefined && ctx.options.toolPolicy.reapproveChangedTools && ctx.toolHashes.changed(spec);
  if (!awaiting || !isPatched(CHANGED_TOOLS_CHECKED_AS_SHOWN)) return planToolCall(call, tools, ctx.options.toolPolicy, truncated, dialect, check);
  const pinned = ctx.toolHashes.pinnedText(spec.name);
  // No pinned text: the model was shown nothing of the tool, and any object goes on to the person.
  const shown: ToolSpec = { ...spec, description: pinned?.description ?? spec.description, parameters: pinned?.parameters ?? { type: 'object' } };
  const plan = planToolCall(call, new Map([[spec.name, shown]]), ctx.options.toolPolicy, truncated, dialect, check);
  return plan.kind === 'run' ? { ...plan, spec } : plan;
}

/**
 * One turn of the ReAct loop: at most `maxSteps` model calls, tool calls
 * checked, confirmed when risky and run in parallel, results fed back in the
 * order of the calls. Runs inside the turn's cancellation scope.
 */
export async function runReactTurn(ctx: TurnContext): Promise<TurnLoopResult> {
  const { options, turnId } = ctx;
  let catalog = await (ctx.catalog ?? readCatalog(ctx));
  let tools = new Map(catalog.tools.map((t) => [t.name, t]));
  ctx.toolHashes.observe(catalog.tools);
  // A changed tool is offered as it was pinned (or not at all) until a person approves the change: the new
  // text, possibly injected, never reaches the model before that. Built per step, as an approval moves the pin.
  const offer = () => ctx.toolHashes.offer(catalog.tools, options.toolPolicy.reapproveChangedTools);
  const texts: string[] = [];
  let modelCalls = 0;
  let toolCalls = 0;
  // One extra model call is allowed to regenerate an answer that cited an unknown memory.
  let regenerations = 0;

  for (let step = 1; step <= options.limits.maxSteps + regenerations; step++) {
    // Checked before each model call, never while a tool runs.
    const over = ctx.budget?.exhausted();
    if (over) return { text: boundTurnText(texts.join('\n\n')), modelCalls, toolCalls, hitStepLimit: false, budgetExceeded: over };
    ctx.onStep(step);
    ctx.setActivity('thinking');
    let reply: CallModelResult;
    try {
      reply = await callModelFor(ctx, step, offer());
    } catch (err) {
      if (err instanceof ModelCallFailed || isCancellation(err) || !(err instanceof ActivityFailure)) throw err;
      ctx.onModelFailure();
      const failure = modelFailureMessage(err);
      throw new ModelCallFailed(failure.type, failure.message);
    }
    const attempt = reply.attempt ?? 1;
    // The deltas the activity had not signalled yet go on the stream now, after the ones it had.
    ctx.publishDeltas(step, attempt, legacyDeltas(reply));
    modelCalls++;
    ctx.onModelCall(attempt);
    ctx.budget?.spend(reply.usage);
    const note = finishNote(reply, texts.some((t) => t.trim() !== ''));
    if (note && isPatched(MODEL_FINISH_NOTED)) ctx.events.emit({ type: 'error', turnId, ...note });
    if (reply.content) texts.push(reply.content);
    const assistant: AssistantMessage = { role: 'assistant', content: reply.content };
    const replyCalls = uniqueCallIds(reply.toolCalls);
    if (replyCalls.length > 0) assistant.tool_calls = replyCalls;
    ctx.messages.push(assistant);
    if (reply.toolCalls.length > 0 && ctx.citations && reply.content) {
      // Text beside tool calls reaches the answer too; it cannot be regenerated (the calls go on), so unknown
      // citations in it are removed. Runs from before the patch left them (asked only when there is one).
      let side = checkCitations(reply.content, ctx.citations.injectedIds, { wide: true });
      const broad = checkCitations(reply.content, ctx.citations.injectedIds, { broad: true });
      if (broad.unknown.length > side.unknown.length && isPatched(CITATION_FORMS_BROADENED)) side = broad;
      if (side.unknown.length > 0 && isPatched(CITATIONS_CHECKED_EVERY_STEP)) {
        ctx.citations.onFlag(side.unknown, 'removed');
        if (side.cleaned) texts[texts.length - 1] = side.cleaned;
        else texts.pop();
        assistant.content = side.cleaned || null;
      }
    }
    if (reply.toolCalls.length === 0) {
      let check = ctx.citations ? checkCitations(reply.content ?? '', ctx.citations.injectedIds) : null;
      if (ctx.citations && check) {
        // The full-width forms a citation takes (【mem:ab12】): checked from the patch on. The wide reading holds the
        // ASCII one, so with unknown ASCII ids too it names them all: the correction, and the removal from a
        // regenerated answer, leave none behind (the regeneration itself is decided by the ASCII ids alone then).
        const wide = checkCitations(reply.content ?? '', ctx.citations.injectedIds, { wide: true });
        if (wide.unknown.length > check.unknown.length && isPatched(CITATIONS_CHECKED_EVERY_STEP)) check = wide;
        // Parentheses and ids joined by words, read after the wide forms (so it names their ids too).
        const broad = checkCitations(reply.content ?? '', ctx.citations.injectedIds, { broad: true });
        if (broad.unknown.length > check.unknown.length && isPatched(CITATION_FORMS_BROADENED)) check = broad;
      }
      if (ctx.citations && check && check.unknown.length > 0) {
        if (regenerations === 0) {
          regenerations = 1;
          ctx.citations.onFlag(check.unknown, 'regenerated');
          texts.pop();
          ctx.messages.push({ role: 'user', content: `[runtime check] ${citationCorrection(check.unknown, ctx.citations.injectedIds)}` });
          continue;
        }
        ctx.citations.onFlag(check.unknown, 'removed');
        texts[texts.length - 1] = check.cleaned;
        assistant.content = check.cleaned;
      }
      if (regenerations > 0) {
        // The rejected answer and the correction are not part of the conversation the user sees.
        const correction = ctx.messages.findIndex((m) => m.role === 'user' && m.content.startsWith('[runtime check] '));
        if (correction > 0) ctx.messages.splice(correction - 1, 2);
      }
      return { text: boundTurnText(texts.join('\n\n')), modelCalls, toolCalls, hitStepLimit: false };
    }

    if (reply.droppedToolCalls) {
      ctx.events.emit({
        type: 'error',
        turnId,
        errorType: FailureType.ModelOutputInvalid,
        message: `The model asked for ${reply.toolCalls.length + reply.droppedToolCalls} tool calls in one step; only the first ${reply.toolCalls.length} were taken.`,
      });
    }
    // The response's budget is named from the patch on; a run from before read every case as one call's limit.
    const truncated = new Map<number, TruncatedCall>((reply.truncatedArguments ?? []).map((t) => [t.index, t.over === 'response' && !isPatched(TRUNCATED_RESPONSE_NAMED) ? { chars: t.chars } : t]));
    // The answer ended before its last call's arguments came: empty, they parsed as {} and the call ran with none
    // (a tool whose parameters are all optional). Not run from the patch on (asked only then).
    const lastCall = replyCalls.length - 1;
    const cutShort = reply.finishReason === 'length' || reply.stoppedReading === true;
    if (cutShort && !truncated.has(lastCall) && replyCalls[lastCall]!.function.arguments.trim() === '' && isPatched(CUT_CALL_NOT_RUN)) truncated.set(lastCall, { chars: 0, over: 'cut' });
    const dialect = isPatched(TOOL_ARGS_FULL_JSON_SCHEMA) ? 'full' : 'legacy';
    // A schema too costly to check is left to the tool from the patch on; runs from before checked it (asked only then).
    const check = { checkCostly: () => !isPatched(COSTLY_SCHEMAS_UNCHECKED), linearUrl: () => isPatched(URL_FORMAT_LINEAR) };
    const plans = replyCalls.map((call, index) => withCallRisk(planAsShown(ctx, call, tools, truncated.get(index), dialect, check)));
    ctx.setActivity('running_tools');
    // Calls from one response are independent by construction: each goes its own way
    // (confirm, run) concurrently, and results are appended in the order of the calls.
    const running = plans.map((plan) => runPlannedCall(ctx, plan, step));
    let results: ChatMessage[];
    try {
      results = await Promise.all(running);
    } catch (err) {
      // An interrupt rejects a call's confirmation wait at once, while its siblings' activities are still
      // being cancelled (they wait for the cancellation to complete): the turn ended with them running, and a
      // late one wrote into the next turn. The turn now ends when every call of the step has.
      if (isPatched(TOOL_CALLS_SETTLED)) {
        const settled = await Promise.allSettled(running);
        if (isCancellation(err) && isPatched(INTERRUPT_KEEPS_RAN_CALLS)) {
          ctx.messages.push(...settled.map((s, i): ChatMessage => (s.status === 'fulfilled' ? s.value : { role: 'tool', tool_call_id: replyCalls[i]!.id, content: INTERRUPTED_CALL_RESULT })));
        }
      }
      throw err;
    }
    const dropped = reply.droppedToolCalls ?? 0;
    const last = results.at(-1);
    if (dropped > 0 && last?.role === 'tool') {
      // The calls past the limit have no result of their own (they are not in the assistant message): without a
      // word here the model took them as done. Only the model's input changes, so runs from before replay alike.
      results[results.length - 1] = {
        ...last,
        content: `${last.content}\n[runtime check] ${dropped} more tool call(s) in that response were not run: at most ${MODEL_OUTPUT_LIMITS.maxToolCalls} are taken from one response. Ask again for the ones still needed.`,
      };
    }
    toolCalls += plans.length;
    // A call refused as ToolChanged was planned against this turn's catalog, which a worker no longer holds: read it
    // again, so a call made again is planned (and confirmed) against the tool as it is now, not refused again until
    // the turn ends (patch asked only then).
    if (results.some((r) => r.role === 'tool' && r.content.startsWith(TOOL_CHANGED_CONTENT)) && isPatched(CATALOG_READ_AFTER_TOOL_CHANGED)) {
      catalog = await readCatalog(ctx);
      tools = new Map(catalog.tools.map((t) => [t.name, t]));
      ctx.toolHashes.observe(catalog.tools);
    }
    ctx.messages.push(...results);
  }

  const capNote = `I stopped after ${options.limits.maxSteps} model steps without reaching a final answer. Tell me how you would like to continue.`;
  texts.push(capNote);
  return { text: boundTurnText(texts.join('\n\n')), modelCalls, toolCalls, hitStepLimit: true };
}

/**
 * Holds a call whose own risk is higher than its tool's (a meeting with
 * attendees is `external`) for confirmation. Behind patch
 * TOOL_RISK_PER_CALL, asked only when it changes the decision, because a
 * history recorded before it ran such calls without asking.
 */
function withCallRisk(plan: ToolCallPlan): ToolCallPlan {
  if (plan.kind !== 'run' || plan.risk === plan.spec.risk || plan.needsConfirmation) return plan;
  return isPatched(TOOL_RISK_PER_CALL) ? { ...plan, needsConfirmation: true } : { ...plan, risk: plan.spec.risk };
}

/** Why a call waits for the user, as shown with the confirmation. */
function riskReason(plan: Extract<ToolCallPlan, { kind: 'run' }>): string {
  if (plan.risk === 'external') {
    const via = plan.spec.externalWhen && plan.spec.risk !== 'external' ? ` (${plan.spec.externalWhen.argument})` : '';
    return `external tool: sends data to someone other than the user${via}`;
  }
  return `${plan.risk} tool${plan.risk === 'destructive' ? '' : ' (session policy)'}`;
}

/** A turn's answer as kept in its result and event: long answers keep their start and say how much was cut. */
function boundTurnText(text: string): string {
  if (text.length <= MAX_TURN_TEXT_CHARS) return text;
  return `${text.slice(0, MAX_TURN_TEXT_CHARS)}\n[… ${text.length - MAX_TURN_TEXT_CHARS} more characters not kept]`;
}

/** Results recorded before deltas moved to plain strings carried whole `text_delta` events. */
function legacyDeltas(reply: CallModelResult): string[] {
  if (reply.unpublishedDeltas) return reply.unpublishedDeltas;
  const legacy = (reply as { unpublished?: Array<{ delta?: unknown }> }).unpublished ?? [];
  return legacy.flatMap((e) => (typeof e?.delta === 'string' ? [e.delta] : []));
}

async function runPlannedCall(ctx: TurnContext, plan: ToolCallPlan, step: number): Promise<ToolMessage> {
  const { events, turnId } = ctx;
  const call: ToolCall = plan.call;
  const toolName = call.function.name;
  const argumentsPreview = previewValue(plan.kind === 'reject' ? call.function.arguments : plan.args, 500);
  events.emit({ type: 'tool_call_start', turnId, step, toolCallId: call.id, toolName, argumentsPreview });
  // Run time starts when the tool is started; a wait for confirmation is counted apart.
  let started = nowMs();
  let waitedMs: number | undefined;
  const finish = (ok: boolean, content: string, errorType?: string): ToolMessage => {
    const durationMs = waitedMs !== undefined && errorType === FailureType.ToolDeclined ? 0 : nowMs() - started;
    ctx.onToolCall({
      toolCallId: call.id,
      toolName,
      status: ok ? 'ok' : errorType === FailureType.ToolDeclined ? 'declined' : plan.kind === 'reject' ? 'rejected' : 'failed',
      durationMs,
      ...(waitedMs !== undefined ? { waitedMs } : {}),
      arguments: previewValue(argumentsPreview, 300),
      result: preview(content, 300),
      ...(errorType ? { errorType } : {}),
    });
    events.emit({
      type: 'tool_call_result',
      turnId,
      step,
      toolCallId: call.id,
      toolName,
      ok,
      preview: preview(content),
      errorType,
      durationMs,
      ...(waitedMs !== undefined ? { waitedMs } : {}),
    });
    return { role: 'tool', tool_call_id: call.id, content };
  };

  if (plan.kind === 'reject') return finish(false, toolErrorContent(plan.errorType, plan.detail), plan.errorType);

  const changed = ctx.options.toolPolicy.reapproveChangedTools && ctx.toolHashes.changed(plan.spec);
  if (plan.needsConfirmation || changed) {
    const now = nowMs();
    const waitStarted = nowMs();
    const decision = await ctx.awaitDecision({
      toolCallId: call.id,
      confirmationId: `${turnId}:${step}:${call.id}`,
      toolName,
      arguments: plan.args,
      risk: plan.risk,
      turnId,
      requestedAt: new Date(now).toISOString(),
      expiresAt: isoAt(now + ctx.options.limits.confirmationTimeoutMs),
      reason: changed
        ? 'this tool\'s description or schema changed since this session first saw it'
        : riskReason(plan),
      ...(changed ? { change: ctx.toolHashes.describeChange(plan.spec) } : {}),
    });
    waitedMs = nowMs() - waitStarted;
    started = nowMs();
    if (!decision.approved) {
      const why =
        decision.decidedBy === 'timeout'
          ? 'Nobody confirmed this action in time, so it was not run.'
          : `The user declined this action${decision.reason ? `: ${decision.reason}` : '.'}`;
      return finish(false, toolErrorContent(FailureType.ToolDeclined, why), FailureType.ToolDeclined);
    }
    if (changed) ctx.toolHashes.approve(plan.spec);
    // `running_tools` once no call waits for a person (awaitDecision's end sets it then). Set here as well, it said
    // so while a sibling still waited; from the patch on, not then (asked only then: the status event it emits
    // can complete a waiting event poll, and runs from before emitted it here).
    if ((ctx.decisionsPending?.() ?? 0) === 0 || !isPatched(RUNNING_TOOLS_AFTER_LAST_DECISION)) ctx.setActivity('running_tools');
  }

  ctx.progress.started(turnId, call.id, toolName, step);
  try {
    const input = {
      sessionId: ctx.sessionId,
      turnId,
      toolCallId: call.id,
      toolName,
      arguments: plan.args,
      namespace: ctx.options.namespace,
      // Models may reuse call ids across the steps of one turn (`call_0` each time), so the step is part of the key.
      // Runs that started a tool call before the step was added keep the key they had.
      idempotencyKey: isPatched(IDEMPOTENCY_KEY_PER_STEP) ? `${ctx.sessionId}:${turnId}:${step}:${call.id}` : `${ctx.sessionId}:${turnId}:${call.id}`,
      // The definition the call was checked and confirmed against: a tool changed since is not run (ToolChanged).
      toolHash: plan.spec.hash,
      toolRisk: plan.spec.risk,
    };
    const retry: RetryPolicy = { maximumAttempts: plan.spec.maxAttempts, initialInterval: '300 milliseconds', nonRetryableErrorTypes: [...nonRetryableFailureTypes] };
    const summary = `tool ${toolName} (call ${call.id})`;
    const result = runsLocally(plan.spec)
      ? await executeToolLocally.executeWithOptions(
          { startToCloseTimeout: plan.spec.timeoutMs, cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED, retry, summary },
          [input],
        )
      : await executeTool.executeWithOptions(
          {
            startToCloseTimeout: plan.spec.timeoutMs,
            heartbeatTimeout: Math.min(3000, plan.spec.timeoutMs),
            cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
            retry,
            summary,
          },
          [input],
        );
    return finish(true, result.content);
  } catch (err) {
    if (isCancellation(err) || !(err instanceof TemporalFailure)) throw err;
    const failure = toolFailureContent(err, plan.spec);
    return finish(false, failure.content, failure.errorType);
  } finally {
    ctx.progress.finished(call.id);
  }
}

/** Waits for a decision or the timeout; a timeout counts as a denial. */
export async function waitForDecision(
  lookup: () => Decision | undefined,
  timeoutMs: number,
): Promise<Decision> {
  const decided = await condition(() => lookup() !== undefined, timeoutMs);
  if (!decided) return { approved: false, decidedBy: 'timeout' };
  return lookup() as Decision;
}
