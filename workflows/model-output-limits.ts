import { JSON_LIMITS } from './json-bounds';

/**
 * Bounds on what a model may put into history and events through one model
 * call. The model activity enforces them before it returns (its result is
 * written to history); the workflow checks the arguments again before it
 * parses them.
 */
export const MODEL_OUTPUT_LIMITS = {
  /** Characters of text one model call may answer with; the rest is dropped. */
  maxTextChars: 100_000,
  /** Tool calls taken from one response; more are rejected with a message to the model. */
  maxToolCalls: 32,
  /** Characters of one call's arguments kept; a longer call is rejected as too large. */
  maxArgumentChars: JSON_LIMITS.maxChars,
  /** Characters of all calls' arguments in one response. */
  maxTotalArgumentChars: 256_000,
  /** A tool name or call id longer than this cannot be real. */
  maxNameChars: 128,
} as const;

/** Deltas carried by one `textDeltas` signal. */
export const TEXT_DELTAS_PER_SIGNAL = 500;

/** Characters of a turn's answer kept in its result and `turn_completed` event. */
export const MAX_TURN_TEXT_CHARS = 200_000;
