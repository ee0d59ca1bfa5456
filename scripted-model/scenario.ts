import { z } from 'zod';
import type { ChatRequest } from './chat-request';

/*
 * Scenario types. Objects are strict so a typo in a test script
 * (`lastUserMesage`, `chunksize`) fails when the script is loaded instead of
 * silently matching everything.
 */

const ToolCallSpec = z.strictObject({
  id: z.string().min(1).optional(),
  name: z.string().min(1),
  /** An object is sent as JSON; a string is sent verbatim, so tests can shape it exactly. */
  arguments: z.union([z.record(z.string(), z.unknown()), z.string()]),
});

export const StepResponse = z.discriminatedUnion('kind', [
  z.strictObject({
    kind: z.literal('text'),
    text: z.string(),
    /** Characters per streamed delta (default 8). */
    chunkSize: z.number().int().positive().optional(),
    /** Pause between streamed deltas in ms (default 0). */
    delayMs: z.number().nonnegative().optional(),
  }),
  z.strictObject({
    kind: z.literal('tool_calls'),
    calls: z.array(ToolCallSpec).min(1),
    /** Content sent before the calls. */
    text: z.string().optional(),
  }),
  /** 429 with a Retry-After header and an OpenAI-shaped error body. */
  z.strictObject({ kind: z.literal('rate_limit'), retryAfterSeconds: z.number().nonnegative() }),
  /** 500 with an OpenAI-shaped error body. */
  z.strictObject({ kind: z.literal('server_error') }),
  /** Never finishes; streaming requests get their headers first. The client's abort is recorded. */
  z.strictObject({ kind: z.literal('hang') }),
  /** Streams the text, then destroys the socket with no finish_reason and no [DONE]. */
  z.strictObject({ kind: z.literal('truncated_stream'), text: z.string() }),
  /** One tool call whose arguments string is not valid JSON. */
  z.strictObject({ kind: z.literal('malformed_tool_json'), name: z.string().min(1), id: z.string().min(1).optional() }),
  /** 400 with code `context_length_exceeded`, as OpenAI sends it. */
  z.strictObject({ kind: z.literal('context_length') }),
  /** Assistant text that is `JSON.stringify(value)`, for structured-output calls. */
  z.strictObject({ kind: z.literal('json'), value: z.unknown() }),
  /**
   * Chunks sent verbatim, whatever their shape, for tests of hostile model
   * output: each is one SSE event of a streamed answer (then `[DONE]`); a
   * request that does not stream gets the first as its JSON body.
   */
  z.strictObject({ kind: z.literal('raw_chunks'), chunks: z.array(z.unknown()).min(1) }),
]);
export type StepResponse = z.infer<typeof StepResponse>;
export type StepResponseKind = StepResponse['kind'];

const isFunction = (value: unknown): boolean => typeof value === 'function';

export const StepMatcher = z.strictObject({
  /** Exact string or regex, tested against the text of the last `user` message. */
  lastUserMessage: z.union([z.string(), z.instanceof(RegExp)]).optional(),
  /** Whether `tool` messages follow the last `user` message. */
  hasToolResults: z.boolean().optional(),
  /** Every one of these function names is in `request.tools`. */
  toolsOffered: z.array(z.string()).optional(),
  /** None of these function names is in `request.tools`. */
  toolsNotOffered: z.array(z.string()).optional(),
  /** Some system message's content includes this substring. */
  systemIncludes: z.string().optional(),
  /** Escape hatch; a throw counts as a mismatch. */
  where: z.custom<(req: ChatRequest) => boolean>(isFunction, 'must be a function').optional(),
});
export type StepMatcher = z.infer<typeof StepMatcher>;

export const ScriptedStep = z.strictObject({
  /** Shown in failure messages and recorded as `stepName`. */
  name: z.string().optional(),
  match: StepMatcher.optional(),
  /** A function is called with the request when the step is consumed; its result is validated too. */
  respond: z.union([
    StepResponse,
    z.custom<(req: ChatRequest) => StepResponse>(isFunction, 'must be a step response or a function'),
  ]),
  /** How many consecutive requests this step answers (default 1). */
  times: z.number().int().positive().optional(),
});
export type ScriptedStep = z.infer<typeof ScriptedStep>;

export const RecordedRequest = z.object({
  /** 1-based, in arrival order across all lanes. */
  id: z.number().int(),
  path: z.string(),
  lane: z.string(),
  body: z.unknown(),
  stream: z.boolean(),
  /** Name (or `#<position>`) of the step that answered, `fallback`, or absent. */
  stepName: z.string().optional(),
  receivedAt: z.number(),
  /** When the response ended, the client went away, or the server cut the connection. */
  finishedAt: z.number().optional(),
  /** The client closed the connection before the response was complete. */
  aborted: z.boolean(),
  /** Why the request was not expected; any value makes `assertDone` throw. */
  unexpected: z.string().optional(),
});
export type RecordedRequest = z.infer<typeof RecordedRequest>;

export const DEFAULT_LANE = 'default';
/** The runtime's model activity sends the session id in this header, so each session gets its own lane. */
export const LANE_HEADER = 'x-session-id';
