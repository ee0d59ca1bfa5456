import { createRoute, z } from '@hono/zod-openapi';
import { LIST_CURSOR_PATTERN } from '../activities/memory/memory-docs';
import { AuditAction, AuditActor } from '../activities/memory/memory-types';
import { Problem } from './problem';
import { LIMIT_MAXIMA, optionsOverSizeBounds, SESSION_ID_PATTERN, SESSION_ID_RULE, SendMessageResult, SessionLimits, SessionOptions, SessionView, TurnResult } from '../workflows/session-types';
import { EventStreamMessage } from './event-stream-messages';
import { INPUT_LIMITS } from '../workflows/input-request';

/*
 * The HTTP API's routes: every request and response schema is a zod schema
 * (most of them the workflow's own), and /openapi.json is generated from
 * these definitions.
 */

const SessionIdParam = z.object({
  // A schema of its own (not the workflow's instance): .openapi() exists only on schemas made after
  // @hono/zod-openapi extended zod, and the workflow's module may load first.
  sessionId: z.string().regex(SESSION_ID_PATTERN, SESSION_ID_RULE).openapi({ param: { name: 'sessionId', in: 'path' }, example: 'order-42' }),
});

const ToolCallParams = SessionIdParam.extend({
  toolCallId: z.string().min(1).max(256).openapi({ param: { name: 'toolCallId', in: 'path' }, example: 'call_1' }),
});

/** The session's limits, those with a maximum held to it (LIMIT_MAXIMA: the workflow refuses more). */
const BoundedLimits = SessionLimits.extend(
  Object.fromEntries(
    Object.entries(LIMIT_MAXIMA).map(([name, max]) => {
      const given = SessionLimits.shape[name as keyof typeof LIMIT_MAXIMA];
      // The same default as the workflow's, so the OpenAPI document still shows it.
      return [name, given.unwrap().max(max, `at most ${max} ms (${max / 86_400_000} days)`).default(given.def.defaultValue as number)];
    }),
  ),
);

/** Session options a caller may set; the namespace's tenant and user are always the caller's. */
export const MessageSessionOptions = SessionOptions.omit({ sessionId: true, namespace: true })
  .extend({ project: z.string().min(1).max(128).optional(), limits: BoundedLimits.optional() })
  .partial()
  .strict()
  // The sizes a session started here may carry across continue-as-new (workflows/session-types.ts OPTION_SIZE_BOUNDS).
  .superRefine((options, ctx) => {
    for (const message of optionsOverSizeBounds(options)) ctx.addIssue({ code: 'custom', message, path: [message.split(/[ .[]/)[0]!] });
  });

export const PostMessageBody = z
  .object({
    text: z.string().min(1, 'text must not be empty').max(100_000),
    /** Options for a session this message starts (ignored by a running one). */
    options: MessageSessionOptions.optional(),
    /** Answer when the turn has finished, with its result. */
    waitForTurn: z.boolean().optional(),
  })
  .strict()
  .openapi('PostMessage');

/** "5", W/"5" or 5: the session version an If-Match names (in group 1). */
export const IF_MATCH_PATTERN = /^\s*(?:W\/)?"?(\d{1,12})"?\s*$/;

const MessageHeaders = z.object({
  'idempotency-key': z.string().min(1).max(128).optional().openapi({ description: 'Becomes the message\'s clientMessageId: a resend with the same key returns the first answer and starts no second turn.' }),
  'if-match': z
    .string()
    .max(32)
    .regex(IF_MATCH_PATTERN, 'If-Match must be a session version such as "5" (the ETag of GET /v1/sessions/{id})')
    .optional()
    .openapi({ description: 'The session version the message expects (the ETag of GET /v1/sessions/{id}); 409 with currentVersion when it moved on.' }),
});

export const MessageAccepted = SendMessageResult.extend({ sessionId: z.string(), turn: TurnResult.optional() }).openapi('MessageAccepted');

export const Decision = z
  .object({
    approved: z.boolean(),
    reason: z.string().max(2_000).optional(),
    confirmationId: z
      .string()
      .min(1)
      .max(700)
      .optional()
      .openapi({ description: "The request decided (a pending confirmation's confirmationId): taken only if that request still waits. Models reuse call ids, so a decision by id alone may land on a later call under the same id." }),
  })
  .strict()
  .openapi('Decision');
export const ReasonBody = z.object({ reason: z.string().max(2_000).optional() }).strict().openapi('Reason');
export const InterruptBody = z
  .object({
    reason: z.string().max(2_000).optional(),
    turnId: z.string().min(1).max(64).optional().describe('The turn to stop: when it has ended, nothing is stopped (a later turn is left alone)'),
  })
  .strict()
  .openapi('Interrupt');

const problemResponses = (...statuses: number[]) =>
  Object.fromEntries(
    statuses.map((s) => [s, { description: `Problem details (RFC 9457), status ${s}`, content: { 'application/problem+json': { schema: Problem } } }]),
  );

const security = [{ bearer: [] as string[] }];

export const postMessageRoute = createRoute({
  method: 'post',
  path: '/v1/sessions/{sessionId}/messages',
  summary: 'Send a message (starts or restores the session when needed)',
  security,
  request: { params: SessionIdParam, headers: MessageHeaders, body: { required: true, content: { 'application/json': { schema: PostMessageBody } } } },
  responses: {
    202: { description: 'Accepted: the turn runs; follow it on the event stream', content: { 'application/json': { schema: MessageAccepted } } },
    200: { description: 'The finished turn (waitForTurn)', content: { 'application/json': { schema: MessageAccepted } } },
    ...problemResponses(401, 403, 409, 413, 422, 429, 503, 504),
  },
});

export const getSessionRoute = createRoute({
  method: 'get',
  path: '/v1/sessions/{sessionId}',
  summary: 'Read a session (status, window, summary, key facts, pending confirmations, counters)',
  security,
  request: { params: SessionIdParam },
  responses: {
    200: {
      description: 'The session view (the workflow\'s getSession query); ETag is its version',
      content: { 'application/json': { schema: SessionView } },
    },
    ...problemResponses(401, 403, 404, 429, 503, 504),
  },
});

export const eventsRoute = createRoute({
  method: 'get',
  path: '/v1/sessions/{sessionId}/events',
  summary: 'The session\'s events as Server-Sent Events (id = offset; resume with Last-Event-ID or ?from=)',
  security,
  request: {
    params: SessionIdParam,
    query: z.object({ from: z.coerce.number().int().min(0).optional().openapi({ description: 'First offset to send (Last-Event-ID + 1 wins when both are given)' }) }),
    headers: z.object({ 'last-event-id': z.string().regex(/^\d{1,15}$/).optional() }),
  },
  responses: {
    200: {
      description:
        'text/event-stream, one EventStreamMessage after another: `id: <offset>`, `event: <AgentEvent type>`, `data: <AgentEvent JSON>`; ends with `event: end` when the session closes, or `event: problem` (e.g. TruncatedOffset when the reader fell behind what the session keeps)',
      content: { 'text/event-stream': { schema: EventStreamMessage } },
    },
    ...problemResponses(401, 403, 404, 409, 410, 422, 429, 503, 504),
  },
});

export const decideRoute = createRoute({
  method: 'post',
  path: '/v1/sessions/{sessionId}/tool-calls/{toolCallId}/decision',
  summary: 'Approve or deny a tool call held for confirmation (owner, or an approver or admin of its tenant)',
  security,
  request: { params: ToolCallParams, body: { required: true, content: { 'application/json': { schema: Decision } } } },
  responses: { 204: { description: 'Decided' }, ...problemResponses(401, 403, 404, 422, 429, 503, 504) },
});

const InputParams = SessionIdParam.extend({
  inputId: z
    .string()
    .min(3)
    .max(300)
    .regex(/^.+:\d{1,4}$/, 'expected "<toolCallId>:<n>"')
    .openapi({ param: { name: 'inputId', in: 'path' }, example: 'call_1:1' }),
});

export const InputAnswerBody = z
  .object({
    action: z.enum(['accept', 'decline', 'cancel']),
    // Checked by the session against the schema the MCP server sent (each problem named), not here.
    content: z
      .record(z.string().max(128), z.union([z.string().max(INPUT_LIMITS.stringChars), z.number(), z.boolean(), z.array(z.string().max(INPUT_LIMITS.stringChars)).max(INPUT_LIMITS.arrayItems)]))
      .optional()
      .describe('With action "accept": the answer, fitting the requestedSchema of the pending input'),
  })
  .strict()
  .openapi('InputAnswer');

export const answerInputRoute = createRoute({
  method: 'post',
  path: '/v1/sessions/{sessionId}/inputs/{inputId}',
  summary: 'Answer a question an MCP server asked during a tool call (getSession pendingInputs, or the input_required event)',
  security,
  request: { params: InputParams, body: { required: true, content: { 'application/json': { schema: InputAnswerBody } } } },
  responses: { 204: { description: 'Answered; the tool call resumes' }, ...problemResponses(401, 403, 404, 422, 429, 503, 504) },
});

export const interruptRoute = createRoute({
  method: 'post',
  path: '/v1/sessions/{sessionId}/interrupt',
  summary: 'Stop the running turn',
  security,
  request: { params: SessionIdParam, body: { required: false, content: { 'application/json': { schema: InterruptBody } } } },
  responses: { 202: { description: 'Interrupt sent' }, ...problemResponses(401, 403, 404, 422, 429, 503, 504) },
});

export const endRoute = createRoute({
  method: 'post',
  path: '/v1/sessions/{sessionId}/end',
  summary: 'End the session (it is archived)',
  security,
  request: { params: SessionIdParam, body: { required: false, content: { 'application/json': { schema: ReasonBody } } } },
  responses: { 202: { description: 'End sent' }, ...problemResponses(401, 403, 404, 422, 429, 503, 504) },
});

export const SessionSummary = z
  .object({
    sessionId: z.string(),
    tenant: z.string(),
    user: z.string(),
    status: z.string().describe('SessionStatus: created, active, awaiting_approval, ...'),
    pendingApprovals: z.number().int(),
    version: z.number().int().optional(),
    lastTurn: z.string().optional(),
    startedAt: z.string(),
    closedAt: z.string().optional().describe('When the session\'s newest run closed (archived, ended); absent while it runs'),
  })
  .openapi('SessionSummary');

/** The statuses a session is listed by. `continued` is not one: a run closed by continue-as-new goes on as its session's next run. */
export const LISTED_SESSION_STATUSES = ['awaiting_approval', 'active', 'created', 'archived'] as const;

export const listSessionsRoute = createRoute({
  method: 'get',
  path: '/v1/sessions',
  summary: 'Sessions the caller may read, each once: those waiting for approval first, then the other running ones, newest first, then (when asked) closed ones, most recently closed first',
  security,
  request: {
    query: z.object({
      user: z.string().min(1).max(128).optional().openapi({ description: 'Only this user\'s sessions (approvers and admins; a user sees only their own anyway)' }),
      status: z
        .enum(LISTED_SESSION_STATUSES, { error: `status must be one of ${LISTED_SESSION_STATUSES.join(', ')} (a run closed by continue-as-new is listed as its session; an archive past its retention lists as archived)` })
        .optional()
        .openapi({ description: 'Only sessions whose SessionStatus is this; archived lists closed sessions' }),
      state: z
        .enum(['running', 'closed', 'any'])
        .optional()
        .openapi({ description: 'Running sessions, closed ones (archived or ended) or both; default running, or any when a status is given' }),
      limit: z.coerce.number().int().min(1).max(200).default(50),
    }),
  },
  responses: {
    200: { description: 'Sessions', content: { 'application/json': { schema: z.object({ sessions: z.array(SessionSummary) }) } } },
    ...problemResponses(401, 422, 429, 503),
  },
});

export const PendingApproval = z
  .object({
    sessionId: z.string(),
    tenant: z.string(),
    user: z.string(),
    toolCallId: z.string(),
    toolName: z.string(),
    risk: z.string(),
    requestedAt: z.string().optional(),
    confirmation: z.record(z.string(), z.unknown()).describe('The whole pending confirmation, as confirmation_required carries it'),
  })
  .openapi('PendingApproval');

export const approvalsRoute = createRoute({
  method: 'get',
  path: '/v1/approvals',
  summary: 'The approvals inbox: calls held for a person, in the sessions the caller may decide (their own; their tenant\'s as approver or admin)',
  security,
  request: { query: z.object({ limit: z.coerce.number().int().min(1).max(200).default(50) }) },
  responses: {
    200: {
      description: 'Pending approvals',
      content: {
        'application/json': {
          schema: z.object({
            approvals: z.array(PendingApproval),
            unreadable: z
              .array(z.string())
              .optional()
              .openapi({ description: 'Sessions waiting for approval whose pending calls could not be read now (workers slow or down): their calls are missing from `approvals`. When none could be read the answer is 503 or 504 instead.' }),
          }),
        },
      },
    },
    ...problemResponses(401, 422, 429, 503, 504),
  },
});

const UserParams = z.object({
  tenant: z.string().min(1).max(128).openapi({ param: { name: 'tenant', in: 'path' }, example: 'acme' }),
  user: z.string().min(1).max(128).openapi({ param: { name: 'user', in: 'path' }, example: 'ana' }),
});

const MemoryStatus = z.enum(['active', 'superseded', 'expired', 'deleted']);

export const MemoryItem = z
  .object({
    id: z.string(),
    kind: z.enum(['fact', 'preference', 'intent']),
    status: MemoryStatus,
    text: z.string(),
    key: z.string().optional(),
    value: z.string().optional(),
    statement: z.string().optional(),
    polarity: z.enum(['prefers', 'avoids']).optional(),
    weight: z.number().optional(),
    origin: z.enum(['user', 'tool_confirmed']),
    sessionId: z.string(),
    createdAt: z.string(),
    updatedAt: z.string(),
    expiresAt: z.string(),
  })
  .openapi('Memory');

/** Memories a session kept under a project (its options' `project`) are that project's: named to be listed, deleted or audited. */
const ProjectQuery = z.object({
  project: z.string().min(1).max(128).optional().openapi({ description: "The project the memories were kept under (a session's options.project); absent, the user's memories outside any project" }),
});

export const listMemoriesRoute = createRoute({
  method: 'get',
  path: '/v1/users/{tenant}/{user}/memories',
  summary: 'A user\'s memories (that user, or an admin of the tenant); superseded, expired and deleted ones on request are the audit trail',
  security,
  request: {
    params: UserParams,
    query: ProjectQuery.extend({
      status: z
        .string()
        .regex(/^(active|superseded|expired|deleted)(,(active|superseded|expired|deleted))*$/)
        .optional()
        .openapi({ description: 'Comma-separated statuses; default active' }),
      kind: z.enum(['fact', 'preference', 'intent']).optional(),
      q: z.string().min(1).max(200).optional().openapi({ description: 'Only memories whose text contains this (case-insensitive), searched among all of them before the limit' }),
      limit: z.coerce.number().int().min(1).max(500).default(100),
      cursor: z.string().regex(LIST_CURSOR_PATTERN).optional().openapi({ description: 'The `next` of the previous page, with the same filters: the page after it' }),
    }),
  },
  responses: {
    200: {
      description: 'Memories, newest first',
      content: {
        'application/json': {
          schema: z.object({ memories: z.array(MemoryItem), malformed: z.number().int(), next: z.string().optional().describe('Present when more memories match: pass it as cursor for the next page') }),
        },
      },
    },
    ...problemResponses(401, 403, 422, 429, 503, 504),
  },
});

const MemoryIdParams = UserParams.extend({ memoryId: z.string().regex(/^mem_[0-9a-f]{6,64}$/).openapi({ param: { name: 'memoryId', in: 'path' }, example: 'mem_1a2b3c4d' }) });

export const deleteMemoryRoute = createRoute({
  method: 'delete',
  path: '/v1/users/{tenant}/{user}/memories/{memoryId}',
  summary: 'Delete one memory (the audit trail keeps what it was)',
  security,
  request: {
    params: MemoryIdParams,
    query: ProjectQuery,
    body: { required: false, content: { 'application/json': { schema: ReasonBody } } },
  },
  responses: {
    200: { description: 'Deleted (the memory as it was)', content: { 'application/json': { schema: z.object({ deleted: z.literal(true), memory: MemoryItem.optional() }) } } },
    ...problemResponses(401, 403, 404, 422, 429, 503, 504),
  },
});

const MemorySnapshotItem = z
  .object({
    kind: z.enum(['fact', 'preference', 'intent']),
    status: MemoryStatus,
    text: z.string().describe('Empty once the entry is purged after the audit retention'),
    key: z.string().optional(),
    value: z.string().optional(),
    statement: z.string().optional(),
    polarity: z.enum(['prefers', 'avoids']).optional(),
    topic: z.string().optional(),
    weight: z.number().optional(),
    expiresAt: z.string(),
    updatedAt: z.string(),
    supersededBy: z.string().optional(),
  })
  .openapi('MemorySnapshot');

export const MemoryAuditItem = z
  .object({
    version: z.number().int(),
    action: AuditAction,
    reason: z.string(),
    at: z.string(),
    actor: AuditActor.describe('Who or what made the change: `user` or `admin` with their principal for a deletion through the API or the client'),
    before: MemorySnapshotItem.nullable(),
    after: MemorySnapshotItem,
    purgedAt: z.string().optional(),
  })
  .openapi('MemoryAuditEntry');

export const memoryAuditRoute = createRoute({
  method: 'get',
  path: '/v1/users/{tenant}/{user}/memories/{memoryId}/audit',
  summary: 'One memory\'s audit trail, oldest first: each change with its action, reason, who made it, when, and the memory before and after (that user, or an admin of the tenant)',
  security,
  request: { params: MemoryIdParams, query: ProjectQuery },
  responses: {
    200: {
      description: 'The audit trail',
      content: { 'application/json': { schema: z.object({ memoryId: z.string(), entries: z.array(MemoryAuditItem), malformed: z.number().int() }).openapi('MemoryAudit') } },
    },
    ...problemResponses(401, 403, 404, 422, 429, 503, 504),
  },
});

export const meRoute = createRoute({
  method: 'get',
  path: '/v1/me',
  summary: 'Who the bearer token is, and where operators look (the console signs in with this)',
  security,
  responses: {
    200: {
      description: 'The caller\'s principal',
      content: {
        'application/json': {
          schema: z
            .object({
              tenant: z.string(),
              user: z.string(),
              roles: z.array(z.enum(['user', 'approver', 'admin'])),
              temporalNamespace: z.string(),
              temporalUiUrl: z.string().optional(),
            })
            .openapi('Me'),
        },
      },
    },
    ...problemResponses(401, 429),
  },
});

/** One label set of a metric: its catalog labels, and its total or value (counters, gauges) or count and sum (histograms). */
const MetricRowSchema = z.object({
  labels: z.record(z.string(), z.string()),
  value: z.number().optional(),
  count: z.number().optional(),
  sum: z.number().optional(),
});

export const metricsSeriesRoute = createRoute({
  method: 'get',
  path: '/v1/metrics/series',
  summary: 'The workers\' metrics over the last hour, per capability, for the dashboard (admins)',
  security,
  request: {
    query: z.object({
      after: z.iso
        .datetime({ offset: true })
        .optional()
        .openapi({ description: 'Only the samples taken after this time: the `at` of the newest sample the caller holds, so a dashboard that polls reads each sample once' }),
    }),
  },
  responses: {
    200: {
      description: 'Samples, oldest first',
      content: {
        'application/json': {
          schema: z
            .object({
              everyMs: z.number().int(),
              /** How many samples the server keeps (the last hour at the default interval). */
              keep: z.number().int(),
              catalog: z.array(z.object({ name: z.string(), kind: z.enum(['counter', 'histogram', 'gauge']), capability: z.enum(['sessions', 'tools', 'mcp', 'memory', 'model']), help: z.string(), labels: z.array(z.string()) })),
              workers: z.array(z.string()),
              samples: z.array(z.object({ at: z.string(), metrics: z.record(z.string(), z.array(MetricRowSchema)), unreachable: z.array(z.object({ url: z.string(), error: z.string() })) })),
            })
            .openapi('MetricsSeries'),
        },
      },
    },
    ...problemResponses(401, 403, 404, 429),
  },
});

const UsageRowSchema = z.object({ day: z.string(), model: z.string(), inputTokens: z.number().int(), outputTokens: z.number().int(), cost: z.number().nullable() });

export const usageRoute = createRoute({
  method: 'get',
  path: '/v1/usage',
  summary: 'Tokens and cost by day and model: your own, one of your sessions, or (tenant admins) any user\'s or the whole tenant\'s',
  security,
  request: {
    query: z.object({
      user: z.string().min(1).max(128).optional().openapi({ description: 'Another user of your tenant (admins); default: yourself, or the whole tenant for admins with all=true' }),
      all: z.enum(['true', 'false']).optional().openapi({ description: 'The whole tenant (admins)' }),
      sessionId: z.string().regex(SESSION_ID_PATTERN, SESSION_ID_RULE).optional(),
      days: z.coerce.number().int().min(1).max(366).default(1).openapi({ description: 'Whole UTC days, today included' }),
    }),
  },
  responses: {
    200: {
      description: 'Usage',
      content: {
        'application/json': {
          schema: z
            .object({
              currency: z.string(),
              rows: z.array(UsageRowSchema),
              total: z.object({ inputTokens: z.number().int(), outputTokens: z.number().int(), cost: z.number(), calls: z.number().int() }),
              unpriced: z.array(z.string()),
            })
            .openapi('Usage'),
        },
      },
    },
    ...problemResponses(401, 403, 422, 429, 503, 504),
  },
});
