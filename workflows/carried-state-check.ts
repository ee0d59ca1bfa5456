import { z } from 'zod';
import { describeZodError } from './input-guard';
import { SessionStatus } from './session-types';

/*
 * The state a run carries is its input, and any Temporal client (the
 * `temporal` CLI, another language's SDK) can start a run with any JSON
 * there. The workflow code reads it as the shape its own continue-as-new
 * writes; a wrong type deep inside (a queue entry without text, a stream log
 * that is not a list) used to throw in a workflow task, which Temporal
 * retries for ever. This checks the types the code relies on, so such a
 * start is refused with the field named instead.
 *
 * Loose on purpose: objects may hold fields this version does not know
 * (written by a later one), and optional fields are those some earlier
 * version did not write. Nothing is reshaped: the run reads the input
 * as given, so a state that passes behaves exactly as before.
 */

/*
 * Built on first use, once per run: a new session carries nothing and never
 * needs it, and building these schemas was most of the 19 ms a run spent
 * evaluating the workflow modules (docs/performance.md).
 */
let shape: ReturnType<typeof buildShape> | undefined;

function buildShape() {
  const str = z.string();
  const num = z.number().finite();
  const count = z.number().int().nonnegative();
  const actor = z.looseObject({ tenant: str, user: str });
  const pair = <T extends z.ZodType>(value: T) => z.tuple([str, value]);

  const message = z.looseObject({
    role: z.enum(['system', 'user', 'assistant', 'tool']),
    content: str.nullable().optional(),
    tool_calls: z.array(z.looseObject({ id: str, function: z.looseObject({ name: str, arguments: str }) })).optional(),
    tool_call_id: str.optional(),
  });

  const turn = z.looseObject({ turnId: str, messages: z.array(message), outcome: str, startedAt: str, endedAt: str, by: actor.optional() });

  // Every version that carried a summary wrote all eight lists.
  const strings = z.array(str);
  const summary = z.looseObject({
    userProfile: strings,
    preferences: strings,
    decisions: strings,
    pendingConfirmations: strings,
    unfinishedIntents: strings,
    optionLists: z.array(z.looseObject({ topic: str, options: z.array(str) })),
    identifiers: z.array(z.looseObject({ label: str, value: str })),
    notes: strings,
  });

  const turnResult = z.looseObject({ turnId: str, outcome: str, text: str, modelCalls: num, toolCalls: num, by: actor.optional() });

  return z.looseObject({
    status: SessionStatus.optional(),
    createdAt: str.optional(),
    version: count.optional(),
    baseVersion: count.optional(),
    turnSeq: count.optional(),
    context: z
      .looseObject({
        window: z.array(turn),
        unfolded: z.array(turn),
        summary,
        keyFacts: z.array(z.looseObject({ subject: str, value: str, turnId: str, updatedAt: str, source: str })),
      })
      .optional(),
    // Runs of some early versions carried a counter added after them as null (NaN written as JSON); SessionRun reads it as 0.
    counters: z.record(str, num.nullable()).optional(),
    queue: z.array(z.looseObject({ turnId: str, text: str, clientMessageId: str.optional(), receivedAt: str, by: actor.optional() })).optional(),
    processed: z.array(pair(z.looseObject({ turnId: str, version: num, turn: turnResult.optional() }))).optional(),
    recentResults: z.array(turnResult).optional(),
    toolRecords: z
      .array(z.looseObject({ turnId: str, toolCallId: str, toolName: str, status: str, durationMs: num, arguments: str, result: str }))
      .optional(),
    toolHashes: z.array(pair(str)).optional(),
    toolPinTexts: z.array(pair(z.looseObject({ description: str, parameters: z.record(str, z.unknown()) }))).optional(),
    pendingExtraction: z.array(turn).optional(),
    lastExtractedTurn: turn.optional(),
    // Only what the stream library cannot read otherwise: a topic or publisher sequence of another type (a hostile
    // publish accepted before the publish signal was closed, patch `events-from-workflow-only`) is carried as it was.
    stream: z.looseObject({ log: z.array(z.looseObject({ data: str })), base_offset: num }).optional(),
    owner: actor.optional(),
    // Read defensively where it is used (SessionRun): junk there counts as no failures.
    foldBackoff: z.unknown().optional(),
    endRequested: z.boolean().optional(),
    archivedMessageIds: z.array(pair(z.looseObject({ turnId: str, version: num }))).optional(),
  });
}

/** A carried state that passed the shape check and still could not be read (an event stream entry whose payload does not decode). */
export class CarriedStateUnreadable extends Error {
  override name = 'CarriedStateUnreadable';
}

/** What is wrong with a carried state, or undefined when the run can read it (none, or `null`, is no state). */
export function carriedStateProblem(carried: unknown): string | undefined {
  if (carried === undefined || carried === null) return undefined;
  shape ??= buildShape();
  const parsed = shape.safeParse(carried);
  return parsed.success ? undefined : describeZodError(parsed.error);
}
