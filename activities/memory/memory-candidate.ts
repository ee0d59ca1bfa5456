import { z } from 'zod';

/**
 * One memory the extraction model proposes. Deliberately flat and lenient in
 * shape: which fields a kind needs is the quality gate's call, so a candidate
 * missing one is counted as `malformed` instead of failing the whole batch.
 */
/**
 * The longest a candidate's text field may be before it is counted malformed
 * rather than read. A memory's longest field is 280 characters (the gate
 * says `too_long` past its limits); past this, the gate's patterns would run
 * over whatever the model copied in, 100 KB of a user's message say, on the
 * worker's one thread.
 */
export const MAX_CANDIDATE_FIELD_CHARS = 4_000;
const field = () => z.string().max(MAX_CANDIDATE_FIELD_CHARS);

export const MemoryCandidate = z.object({
  kind: z.enum(['fact', 'preference', 'intent']),
  /** Facts: "user" or "user's <thing>". Preferences may leave it out. */
  subject: field().nullish(),
  /** Facts: a short relation such as "name", "lives in", "works at". */
  predicate: field().nullish(),
  /** Facts: the concrete value. */
  value: field().nullish(),
  /** Preferences and intents: what is preferred or planned. */
  statement: field().nullish(),
  polarity: z.enum(['prefers', 'avoids']).nullish(),
  /** Preferences: the single dimension it sets ("answer length"). */
  topic: field().nullish(),
  /** One short third-person sentence for the prompt: "The user prefers concise answers." */
  text: field(),
  /** The `#n` of the message in the transcript the candidate comes from. */
  sourceMessageIndex: z.number().int(),
  fromTool: z.boolean().default(false),
  userConfirmed: z.boolean().default(false),
  /** The `#n` of the user message that confirmed a tool-sourced candidate. */
  confirmationMessageIndex: z.number().int().nullish(),
  /** Intents: the date after which the plan no longer matters (ISO 8601). */
  validUntil: field().nullish(),
});
export type MemoryCandidate = z.infer<typeof MemoryCandidate>;

/** Candidates one extraction pass takes; the rest are counted `over_limit`. */
export const MAX_CANDIDATES = 50;

/**
 * The whole answer the extraction model must give. Any number of candidates:
 * with more than 50 the whole answer was refused, and at temperature 0 every
 * retry gave the same, so a long, fact-dense pass lost everything.
 */
export const ExtractionOutput = z.object({ candidates: z.array(z.unknown()) });
