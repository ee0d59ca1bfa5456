import { z } from 'zod';
import { builtOnce } from './built-once';
import type { AgentEvent } from './events';
import type { TurnResult } from './session-types';

/**
 * Reads that hold nothing on the server: what a caller gets by waiting on
 * an update (an event poll, a turn wait), read by query instead. The typed
 * client uses them when the session refuses another waiting call
 * (`TooManyWaiting`, workflows/waiting-budget.ts); any SDK can send them as
 * plain JSON.
 */
const schemas = builtOnce('session-queries', () => {
  const ReadEventsInput = z.object({
    fromOffset: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
    /** At most this many events (default and maximum 1,000). */
    limit: z.number().int().min(1).max(1_000).optional(),
  });
  const GetTurnInput = z.object({ turnId: z.string().min(1).max(64) });
  return { ReadEventsInput, GetTurnInput };
});

export const { ReadEventsInput, GetTurnInput } = schemas;
export type ReadEventsInput = z.infer<typeof ReadEventsInput>;
export type GetTurnInput = z.infer<typeof GetTurnInput>;

/** About this many UTF-8 bytes of JSON a `readEvents` answer holds (at least one event), as a poll answers about 1 MB; the server refuses a query answer over 2 MB. */
export const READ_EVENTS_MAX_BYTES = 1_000_000;

export interface ReadEventsResult {
  /** Events in offset order; offsets are the stream's, as a poll's. */
  items: Array<{ offset: number; event: AgentEvent }>;
  /** The offset to read from next. */
  nextOffset: number;
  /** The earliest offset the run keeps; a read from before it starts there. */
  earliestOffset: number;
  /** The run is closing or continuing as new: once it has, its latest run (or the archive) has what follows. */
  closing: boolean;
}

export interface TurnState {
  turnId: string;
  /** `unknown`: not a turn of this session, or one whose result the run no longer keeps (read its events). */
  state: 'queued' | 'running' | 'finished' | 'unknown';
  result?: TurnResult;
}
