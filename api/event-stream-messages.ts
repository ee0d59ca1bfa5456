import { z } from 'zod';
import { AgentEvent } from '../workflows/events';
import { Problem } from './problem';

/*
 * The messages of GET /v1/sessions/{id}/events, for the OpenAPI document.
 * OpenAPI 3.1 has no way to say "a stream of these", so the text/event-stream
 * schema describes one message by its SSE fields (id, event, data), with
 * `data` as the JSON it carries: the usual convention before 3.2's itemSchema.
 */

const eventTypes = AgentEvent.options.map((o) => o.shape.type.value);

/** One event of the session. */
export const SessionEventMessage = z
  .object({
    id: z.string().regex(/^\d+$/).describe('The event\'s offset in the session\'s stream; send it back as Last-Event-ID to resume after it'),
    event: z.enum(eventTypes).describe('The event\'s type, as in data.type'),
    data: AgentEvent,
  })
  .meta({ id: 'SessionEventMessage', description: 'An event of the session: `id: <offset>`, `event: <type>`, `data: <AgentEvent as JSON>`.' });

/** The session's run ended (archived, ended or expired): nothing more will come on this stream. */
export const StreamEndMessage = z
  .object({ event: z.literal('end'), data: z.object({}).strict() })
  .meta({ id: 'StreamEndMessage', description: 'The last message when the session closes: `event: end`, `data: {}`.' });

/** What a `problem` message carries: the problem details' fields a reader acts on. */
export const StreamProblem = Problem.pick({ status: true, failureType: true, detail: true, currentVersion: true, retryAfterSeconds: true, earliestOffset: true, nextOffset: true });
export type StreamProblem = z.infer<typeof StreamProblem>;

export const StreamProblemMessage = z
  .object({ event: z.literal('problem'), data: StreamProblem })
  .meta({
    id: 'StreamProblemMessage',
    description: 'The last message when the stream fails after it started, e.g. TruncatedOffset (with earliestOffset) when the reader fell behind what the session keeps.',
  });

/** Any message of the stream; comment lines (`: keep-alive`) come between them while it is idle. */
export const EventStreamMessage = z
  .union([SessionEventMessage, StreamEndMessage, StreamProblemMessage])
  .meta({ id: 'EventStreamMessage', description: 'One Server-Sent Events message of a session\'s event stream, by its fields; `data` is JSON text on the wire.' });
