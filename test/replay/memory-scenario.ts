import { EXTRACTION_SYSTEM_PROMPT } from '../../activities/memory/extraction-prompt';
import { MemoryRepository } from '../../activities/memory/memory-repository';
import type { ChatRequest, StepResponse } from '../../scripted-model';
import type { SessionOptionsInput } from '../../workflows/session-types';
import { DAY, fact, userSource } from '../support/memory-fixtures';
import type { ScenarioContext } from './scenario';

export const EXTRACTION_MARKER = EXTRACTION_SYSTEM_PROMPT.slice(0, 60);
export const systemOf = (req: ChatRequest): string => String(req.messages[0]?.content ?? '');
export const isExtraction = (req: ChatRequest): boolean => systemOf(req).includes(EXTRACTION_MARKER);

/** Answers the extraction passes (at archive, say) that a scenario did not script with nothing to keep; any other unscripted request fails the recording. */
export function extractNothing(req: ChatRequest): StepResponse {
  if (!isExtraction(req)) throw new Error('an unscripted model request that is not an extraction pass');
  return { kind: 'json', value: { candidates: [] } };
}

/** Session options with long-term memory on (each recording has a database of its own, so the default user is alone in it). */
export const MEMORY_ON: Partial<SessionOptionsInput> = { memory: { enabled: true } };

/** Stores "The user's home city is Lisbon." for the session's user, as if learnt in an earlier session. */
export async function seedHomeCity(ctx: ScenarioContext): Promise<void> {
  const now = new Date();
  const namespace = ctx.options().namespace;
  await new MemoryRepository(ctx.env.db)
    .forNamespace(namespace)
    .writeFact(fact('home city', 'Lisbon', { source: userSource('earlier', 'turn-1'), statedAt: now, expiresAt: new Date(now.getTime() + 30 * DAY) }), { actor: { by: 'import' }, now });
}
