import { EXTRACTION_SYSTEM_PROMPT } from '../../activities/memory/extraction-prompt';
import { MemoryRepository } from '../../activities/memory/memory-repository';
import type { ChatRequest, StepResponse } from '../../scripted-model';
import type { SessionOptionsInput } from '../../workflows/session-types';
import { DAY, fact, userSource } from '../support/memory-fixtures';
import type { ScenarioContext } from './scenario';

export const EXTRACTION_MARKER = EXTRACTION_SYSTEM_PROMPT.slice(0, 60);
export const systemOf = (req: ChatRequest): string => String(req.messages[0]?.content ?? '');
export const isExtraction = (req: ChatRequest): boolean => systemOf(req).includes(EXTRACTION_MARKER);
/** The short id the seeded home city memory (seedHomeCity) was recalled under, as the model was shown it. */
export const homeCityMemoryId = (req: ChatRequest): string | undefined => /\[mem:([0-9a-z]+)\][^\n]*home city/.exec(systemOf(req))?.[1];
/** The turn's first model call with memories recalled: no tool has answered yet. */
export const recalledBeforeTools = (req: ChatRequest): boolean => /## Recalled memories/.test(systemOf(req)) && !req.messages.some((m) => m.role === 'tool');

/** Answers the extraction passes (at archive, say) that a scenario did not script with nothing to keep; any other unscripted request fails the recording. */
export function extractNothing(req: ChatRequest): StepResponse {
  if (!isExtraction(req)) throw new Error('an unscripted model request that is not an extraction pass');
  return { kind: 'json', value: { candidates: [] } };
}

/** Session options with long-term memory on (each recording has a database of its own, so the default user is alone in it). */
export const MEMORY_ON: Partial<SessionOptionsInput> = { memory: { enabled: true } };

/** A memory scenario with the probe tools (local_note and the like): extraction passes it did not script keep nothing. */
export const MEMORY_WITH_TOOLS = { session: MEMORY_ON, env: { probeTools: true, modelFallback: extractNothing } } as const;

/** Stores "The user's home city is Lisbon." for the session's user, as if learnt in an earlier session. */
export async function seedHomeCity(ctx: ScenarioContext): Promise<void> {
  const now = new Date();
  const namespace = ctx.options().namespace;
  await new MemoryRepository(ctx.env.db)
    .forNamespace(namespace)
    .writeFact(fact('home city', 'Lisbon', { source: userSource('earlier', 'turn-1'), statedAt: now, expiresAt: new Date(now.getTime() + 30 * DAY) }), { actor: { by: 'import' }, now });
}
