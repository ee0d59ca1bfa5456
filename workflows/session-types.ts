import { z } from 'zod';
import { ChatMessage } from './chat-message';
import { Actor, Principal } from './principal';
import { RiskLevel } from './tool-spec';
import { KeyFact } from './key-facts';
import { PendingInput } from './input-request';
import { SessionSummary } from './session-summary';
import { builtOnce } from './built-once';

/** What a session id may hold (it becomes part of the workflow id). */
export const SESSION_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

export const SESSION_ID_RULE = 'letters, digits, ".", "_", ":" or "-", at most 128';

const DAY_MS = 24 * 3600_000;

/**
 * The longest a session's limits may be. Past them a deadline the workflow
 * computes may not be a time at all (a date past the year 275760, a timer
 * longer than the server takes), and a session would outlive any
 * operator's intent. Runs started before these bounds keep what they were
 * given (workflows/agent-session.ts).
 */
export const LIMIT_MAXIMA = {
  confirmationTimeoutMs: 30 * DAY_MS,
  idleTimeoutMs: 365 * DAY_MS,
  retentionMs: 100 * 365 * DAY_MS,
} as const;

export type BoundedLimit = keyof typeof LIMIT_MAXIMA;

/** The limits over their maxima, as `limits.<name> is <value>, more than the most allowed, <max> (<days> days)`. */
export function limitsOverMaxima(limits: Partial<Record<BoundedLimit, unknown>> | undefined): string[] {
  if (limits === undefined || limits === null || typeof limits !== 'object') return [];
  const over: string[] = [];
  for (const [name, max] of Object.entries(LIMIT_MAXIMA) as Array<[BoundedLimit, number]>) {
    const value = limits[name];
    if (typeof value === 'number' && value > max) over.push(`limits.${name} is ${value}, more than the most allowed, ${max} (${max / DAY_MS} days)`);
  }
  return over;
}

/** The limits with each over its maximum brought down to it (a copy; the others as given). */
export function limitsWithinMaxima<T extends Partial<Record<BoundedLimit, unknown>>>(limits: T): T {
  const out: Record<string, unknown> = { ...limits };
  for (const [name, max] of Object.entries(LIMIT_MAXIMA) as Array<[BoundedLimit, number]>) {
    const value = out[name];
    if (typeof value === 'number' && value > max) out[name] = max;
  }
  return out as T;
}

/**
 * Sizes of what a session's options may hold. The options go with every
 * continue-as-new (whole, beside the carried state, under the server's 2 MB
 * for one input) and into every view of the session, so a start with 1.6 MB
 * of metadata fit, and its first continue-as-new failed the run.
 */
export const OPTION_SIZE_BOUNDS = {
  metadataEntries: 64,
  metadataKeyChars: 128,
  metadataValueChars: 2_048,
  toolNames: 512,
  toolNameChars: 128,
  modelNameChars: 256,
} as const;

/** What in `options` is over OPTION_SIZE_BOUNDS, each naming the field; empty when nothing is. */
export function optionsOverSizeBounds(options: { metadata?: unknown; toolPolicy?: unknown; model?: unknown } | null | undefined): string[] {
  const b = OPTION_SIZE_BOUNDS;
  const over: string[] = [];
  const metadata = options?.metadata;
  if (metadata !== null && typeof metadata === 'object') {
    const entries = Object.entries(metadata);
    if (entries.length > b.metadataEntries) over.push(`metadata has ${entries.length} entries, more than ${b.metadataEntries}`);
    for (const [key, value] of entries) {
      if (key.length > b.metadataKeyChars) over.push(`metadata key "${key.slice(0, 40)}..." is ${key.length} characters, more than ${b.metadataKeyChars}`);
      if (typeof value === 'string' && value.length > b.metadataValueChars) over.push(`metadata.${key.slice(0, 40)} is ${value.length} characters, more than ${b.metadataValueChars}`);
      if (over.length >= 5) return over;
    }
  }
  const policy = options?.toolPolicy as { allow?: unknown; confirmTools?: unknown } | undefined;
  for (const field of ['allow', 'confirmTools'] as const) {
    const names = policy?.[field];
    if (!Array.isArray(names)) continue;
    if (names.length > b.toolNames) over.push(`toolPolicy.${field} has ${names.length} names, more than ${b.toolNames}`);
    const long = names.findIndex((n) => typeof n === 'string' && n.length > b.toolNameChars);
    if (long >= 0) over.push(`toolPolicy.${field}[${long}] is ${String(names[long]).length} characters, more than ${b.toolNameChars}`);
  }
  const name = (options?.model as { name?: unknown } | undefined)?.name;
  if (typeof name === 'string' && name.length > b.modelNameChars) over.push(`model.name is ${name.length} characters, more than ${b.modelNameChars}`);
  return over;
}

export const emptyCounters = (): SessionCounters => ({
  turns: 0,
  modelCalls: 0,
  toolCalls: 0,
  toolFailures: 0,
  interrupts: 0,
  confirmationsRequested: 0,
  continuedAsNew: 0,
  summariesFolded: 0,
  summaryFailures: 0,
  memoriesRecalled: 0,
  memoryExtractions: 0,
  citationsRegenerated: 0,
  citationsFlagged: 0,
  modelAttempts: 0,
  modelFailures: 0,
  signalsIgnored: 0,
  eventsDropped: 0,
  inputsRequested: 0,
  signalsUnauthorized: 0,
  turnsCompacted: 0,
});

const schemas = builtOnce('session-types', () => {
  /** Whose session this is. Every memory read and write is scoped by it. */
  const UserNamespace = z.object({
    tenant: z.string().min(1).max(128),
    user: z.string().min(1).max(128),
    project: z.string().min(1).max(128).optional(),
  });

  const ToolPolicy = z.object({
    /** Tool names (as the model sees them) this session may use; omitted means every tool in the catalog. */
    allow: z.array(z.string()).optional(),
    /** Ask for confirmation before every `write` tool, not only `destructive` ones. */
    confirmWrites: z.boolean().default(false),
    /** Extra tools that always need confirmation in this session. */
    confirmTools: z.array(z.string()).default([]),
    /** Hold back a tool whose description or schema changed since this session first saw it, until approved again. */
    reapproveChangedTools: z.boolean().default(true),
  });

  const SessionLimits = z.object({
    maxSteps: z.number().int().min(1).max(50).default(5),
    /** How long a risky call waits for a decision before it counts as denied. */
    confirmationTimeoutMs: z.number().int().positive().default(5 * 60_000),
    /** Idle time after which the session is archived and the workflow completes. */
    idleTimeoutMs: z.number().int().positive().default(30 * 60_000),
    /** How long an archive is kept before the expiry schedule purges it. */
    retentionMs: z.number().int().positive().default(30 * 24 * 3600_000),
    /** Continue as new once history passes this many events (or Temporal suggests it). */
    maxHistoryEvents: z.number().int().min(200).default(10_000),
    /** Raw turns kept in the window. */
    windowMaxTurns: z.number().int().min(1).max(200).default(20),
    /** Token budget of the raw window, estimated from characters. */
    windowMaxTokens: z.number().int().min(200).default(12_000),
    /** Turns folded into the summary at a time. */
    foldBatchTurns: z.number().int().min(1).max(50).default(5),
  });

  const MemoryPolicy = z.object({
    /** Recall before each turn and extract after; the worker's MEMORY_ENABLED can still turn it off. */
    enabled: z.boolean().default(true),
    /** Periodic extraction over the turns since the last pass. */
    extractEveryTurns: z.number().int().min(1).max(100).default(5),
    /** Check the memory ids an answer cites; regenerate once, then strip and flag unknown ones. */
    citationCheck: z.boolean().default(true),
  });

  const BusyPolicy = z.enum(['interrupt', 'queue']);

  /** Everything a session is started with. Secrets never go here: they live in worker config. */
  const SessionOptions = z.object({
    sessionId: z.string().regex(SESSION_ID_PATTERN, SESSION_ID_RULE),
    namespace: UserNamespace,
    channel: z.string().max(64).default('api'),
    metadata: z.record(z.string(), z.string()).default({}),
    systemPrompt: z.string().max(20_000).optional(),
    model: z.object({ name: z.string().optional(), temperature: z.number().min(0).max(2).optional() }).prefault({}),
    toolPolicy: ToolPolicy.prefault({}),
    limits: SessionLimits.prefault({}),
    memory: MemoryPolicy.prefault({}),
    busyPolicy: BusyPolicy.default('interrupt'),
  });

  const SendMessageInput = z.object({
    text: z.string().min(1, 'text must not be empty').max(100_000),
    clientMessageId: z.string().min(1).max(128).optional(),
    expectedVersion: z.number().int().min(0).optional(),
    /**
     * Complete the update when the turn has finished, with its result in
     * `turn`: one round trip for send-and-wait, and no extra workflow task
     * for a separate `waitForTurn`.
     */
    waitForTurn: z.boolean().optional(),
    /** Who sends it: must be the session's owner (required by the validator; absent in histories from before `principal-required`). */
    principal: Principal.optional(),
  });

  const DecideToolCallInput = z.object({
    toolCallId: z.string().min(1).max(256),
    /**
     * The request decided, as `confirmation_required` and `getSession` name
     * it: a decision that gives one is taken only for that request. Models
     * reuse call ids across steps, so a late decision by id alone could
     * decide a later call the person never saw.
     */
    confirmationId: z.string().min(1).max(700).optional(),
    approved: z.boolean(),
    reason: z.string().max(2_000).optional(),
    /** Who decides: the owner, or an approver or admin of the owner's tenant. */
    principal: Principal.optional(),
  });

  // Signals may arrive with no argument at all (the `temporal` CLI without --input): that is {}.
  // `turnId` names the turn to stop: with it, a Stop that lands after that turn ended does not stop the next one
  // (patch `interrupt-for-named-turn`; runs from before read it as an unknown field: InterruptInputBefore).
  const InterruptInput = z
    .object({ reason: z.string().max(2_000).optional(), turnId: z.string().min(1).max(64).optional(), principal: Principal.optional() })
    .nullish()
    .transform((v) => v ?? {});
  const InterruptInputBefore = z.object({ reason: z.string().max(2_000).optional(), principal: Principal.optional() }).nullish().transform((v) => v ?? {});

  const EndSessionInput = z.object({ reason: z.string().max(2_000).optional(), principal: Principal.optional() }).nullish().transform((v) => v ?? {});

  const WaitForTurnInput = z.object({ turnId: z.string().min(1).max(64), principal: Principal.optional() });

  /** One batch of streamed text from the model activity (see `textDeltasSignal`). */
  const TextDeltasInput = z.object({
    turnId: z.string().min(1).max(64),
    step: z.number().int().min(1).max(1_000),
    attempt: z.number().int().min(1).max(1_000),
    /** Grows by one per batch within a model call attempt; a repeated or older batch is dropped. */
    seq: z.number().int().min(1),
    deltas: z.array(z.object({ delta: z.string().max(20_000), at: z.string().max(64).optional() })).min(1).max(1_000),
  });

  /** Progress a running tool reported (MCP `notifications/progress`), sent by the tool activity to its session. */
  const ToolProgressInput = z.object({
    turnId: z.string().min(1).max(64),
    toolCallId: z.string().min(1).max(256),
    /** Grows by one per signal of a call; a repeated or older one is dropped. */
    seq: z.number().int().min(1),
    progress: z.number().finite(),
    total: z.number().finite().optional(),
    message: z.string().max(2_000).optional(),
  });

  const SessionStatus = z.enum(['created', 'active', 'archived', 'expired']);

  /** What the session is doing right now, finer than its lifecycle status. */
  const Activity = z.enum(['idle', 'thinking', 'running_tools', 'awaiting_confirmation', 'awaiting_input']);

  const TurnOutcome = z.enum(['completed', 'interrupted', 'step_limit', 'failed', 'budget_exceeded']);

  /**
   * A tool that changed since the session pinned it, old and new side by side
   * for the person deciding. Texts are cut to a few thousand characters; a
   * schema too large to show is left out (`parametersChanged` still says).
   */
  const ToolChange = z.object({
    /** The description the session pinned; absent when it did not keep the text (the model then did not see the tool). */
    previousDescription: z.string().optional(),
    /** The description the tool has now, which the model has not seen. */
    description: z.string(),
    parametersChanged: z.boolean(),
    previousParameters: z.record(z.string(), z.unknown()).optional(),
    parameters: z.record(z.string(), z.unknown()).optional(),
  });

  const PendingConfirmation = z.object({
    toolCallId: z.string(),
    /** This request, one of its own even when the model reuses the call id: `<turnId>:<step>:<toolCallId>` (absent in events of older versions). */
    confirmationId: z.string().optional(),
    toolName: z.string(),
    arguments: z.unknown(),
    risk: RiskLevel,
    turnId: z.string(),
    requestedAt: z.string(),
    expiresAt: z.string(),
    /** Why confirmation is needed: the tool's risk, the session policy, or a tool that changed. */
    reason: z.string(),
    /** Present when the tool changed since the session pinned it: what approving would let the model see. */
    change: ToolChange.optional(),
  }).meta({ id: 'PendingConfirmation' });

  /** One turn kept raw in the window: the user's message and everything it caused. */
  const Turn = z.object({
    turnId: z.string(),
    messages: z.array(ChatMessage),
    outcome: TurnOutcome,
    startedAt: z.string(),
    endedAt: z.string(),
    /** Who sent the message (absent for turns from before `principal-required`). */
    by: Actor.optional(),
  });

  const TurnResult = z.object({
    turnId: z.string(),
    outcome: TurnOutcome,
    text: z.string(),
    /** Model calls that answered. */
    modelCalls: z.number().int(),
    /** Every attempt, failed ones and retries included. */
    modelAttempts: z.number().int().optional(),
    toolCalls: z.number().int(),
    error: z.string().optional(),
    /** Who sent the message (absent for turns from before `principal-required`). */
    by: Actor.optional(),
  }).meta({ id: 'TurnResult' });

  const SendMessageResult = z.object({
    turnId: z.string(),
    version: z.number().int(),
    /** The finished turn, when the message asked `waitForTurn`. */
    turn: TurnResult.optional(),
  });

  const SessionCounters = z.object({
    turns: z.number().int(),
    modelCalls: z.number().int(),
    toolCalls: z.number().int(),
    toolFailures: z.number().int(),
    interrupts: z.number().int(),
    confirmationsRequested: z.number().int(),
    continuedAsNew: z.number().int(),
    summariesFolded: z.number().int(),
    summaryFailures: z.number().int(),
    memoriesRecalled: z.number().int().default(0),
    memoryExtractions: z.number().int().default(0),
    citationsRegenerated: z.number().int().default(0),
    citationsFlagged: z.number().int().default(0),
    /** Model call attempts, retries included, and model calls that failed for good. */
    modelAttempts: z.number().int().default(0),
    modelFailures: z.number().int().default(0),
    /** Signals dropped because their input did not parse or did not fit the session's state. */
    signalsIgnored: z.number().int().default(0),
    /** Events the workflow built but could not publish (a bug if ever non-zero). */
    eventsDropped: z.number().int().default(0),
    /** Questions MCP servers asked the user during tool calls (elicitation). */
    inputsRequested: z.number().int().default(0),
    /** Signals dropped because their principal may not act on this session (not counted in `signalsIgnored`). */
    signalsUnauthorized: z.number().int().default(0),
    /** Turns that waited for a fold past the window's budget and became lines in the summary's notes (summarizer failing). */
    turnsCompacted: z.number().int().default(0),
  });

  /**
   * What the `getSession` query returns (and GET /v1/sessions/{id}). The schema
   * names the shape for the API's OpenAPI document; the workflow builds it and
   * does not parse it.
   */
  const SessionView = z
    .object({
      sessionId: z.string(),
      status: SessionStatus,
      activity: Activity,
      version: z.number().int(),
      namespace: UserNamespace,
      /** The session's owner, fixed at creation (restored from the archive). */
      owner: z.object({ tenant: z.string(), user: z.string() }),
      channel: z.string(),
      metadata: z.record(z.string(), z.string()),
      createdAt: z.string(),
      /**
       * The chain of runs answering (its first run's id): the same across continue-as-new, another once the
       * session is restored from its archive or started afresh. Absent from workers before it was shown.
       */
      chainId: z.string().optional(),
      currentTurnId: z.string().nullable(),
      currentStep: z.number().int(),
      queuedMessages: z.number().int(),
      pendingConfirmations: z.array(PendingConfirmation),
      /** Questions MCP servers asked during tool calls, waiting for `answerInput`. */
      pendingInputs: z.array(PendingInput),
      window: z.array(Turn),
      /** Evicted turns whose fold into the summary is still pending (kept raw meanwhile). */
      unfoldedTurns: z.number().int(),
      summary: SessionSummary,
      keyFacts: z.array(KeyFact),
      counters: SessionCounters,
      // Not .nullable(): the OpenAPI generator writes a nullable named schema as allOf [$ref, null type], which refuses null
      // (asteasolutions/zod-to-openapi PR 387); a union with null is the same schema and comes out as anyOf.
      lastTurn: z.union([TurnResult, z.null()]),
      /**
       * What this answer left out to fit in one query answer (the server refuses one over 2 MB): the window's longest
       * texts cut (each marked where it is cut), or its oldest turns. The session's events hold them whole. Absent
       * when nothing was left out.
       */
      cut: z.array(z.string()).optional(),
    })
    .meta({ id: 'SessionView', description: 'A session as getSession shows it: status, window, summary, key facts, pending confirmations and inputs, counters.' });
  return { UserNamespace, ToolPolicy, SessionLimits, MemoryPolicy, BusyPolicy, SessionOptions, SendMessageInput, DecideToolCallInput, InterruptInput, InterruptInputBefore, EndSessionInput, WaitForTurnInput, TextDeltasInput, ToolProgressInput, SessionStatus, Activity, TurnOutcome, ToolChange, PendingConfirmation, Turn, TurnResult, SendMessageResult, SessionCounters, SessionView };
});

export const { UserNamespace, ToolPolicy, SessionLimits, MemoryPolicy, BusyPolicy, SessionOptions, SendMessageInput, DecideToolCallInput, InterruptInput, InterruptInputBefore, EndSessionInput, WaitForTurnInput, TextDeltasInput, ToolProgressInput, SessionStatus, Activity, TurnOutcome, ToolChange, PendingConfirmation, Turn, TurnResult, SendMessageResult, SessionCounters, SessionView } = schemas;
export type UserNamespace = z.infer<typeof UserNamespace>;
export type ToolPolicy = z.infer<typeof ToolPolicy>;
export type SessionLimits = z.infer<typeof SessionLimits>;
export type MemoryPolicy = z.infer<typeof MemoryPolicy>;
export type BusyPolicy = z.infer<typeof BusyPolicy>;
export type SessionOptions = z.infer<typeof SessionOptions>;
export type SessionOptionsInput = z.input<typeof SessionOptions>;
export type SendMessageInput = z.infer<typeof SendMessageInput>;
export type DecideToolCallInput = z.infer<typeof DecideToolCallInput>;
export type InterruptInput = z.input<typeof InterruptInput>;
export type EndSessionInput = z.input<typeof EndSessionInput>;
export type WaitForTurnInput = z.infer<typeof WaitForTurnInput>;
export type TextDeltasInput = z.infer<typeof TextDeltasInput>;
export type ToolProgressInput = z.infer<typeof ToolProgressInput>;
export type SessionStatus = z.infer<typeof SessionStatus>;
export type Activity = z.infer<typeof Activity>;
export type TurnOutcome = z.infer<typeof TurnOutcome>;
export type ToolChange = z.infer<typeof ToolChange>;
export type PendingConfirmation = z.infer<typeof PendingConfirmation>;
export type Turn = z.infer<typeof Turn>;
export type TurnResult = z.infer<typeof TurnResult>;
export type SendMessageResult = z.infer<typeof SendMessageResult>;
export type SessionCounters = z.infer<typeof SessionCounters>;
export type SessionView = z.infer<typeof SessionView>;
