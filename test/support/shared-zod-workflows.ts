import { workflowInfo } from '@temporalio/workflow';
import { z } from 'zod';
import { builtOnce } from '../../workflows/built-once';
import { ChatMessage } from '../../workflows/chat-message';
import { AgentEvent } from '../../workflows/events';
import { PendingInput } from '../../workflows/input-request';
import { SessionOptions } from '../../workflows/session-types';
import { ToolSpec } from '../../workflows/tool-spec';
import { runChecks, type CheckAnswer } from './shared-zod-checks';

/*
 * Workflows for test/integration/shared-zod.test.ts, bundled with the agent
 * worker's bundler options, which preload zod (workflows/shared-libraries.ts).
 */

/** The checks' answers, and whether this run's zod is the preloaded one (the SDK freezes what it preloads). */
export async function zodChecks(): Promise<{ shared: boolean; answers: CheckAnswer[] }> {
  return { shared: Object.isFrozen(z.ZodType), answers: runChecks() };
}

/** One schema of each module that builds its schemas once per sandbox (workflows/built-once.ts). */
const sharedSchemas = (): z.ZodType[] => [SessionOptions, AgentEvent, ChatMessage, PendingInput, ToolSpec];

/**
 * Which run built what `builtOnce` keeps, and whether this run's schemas are the very objects that run saw.
 * (A builder that reads the run, as this one does, is what workflows/built-once.ts forbids: here it is the probe.)
 */
export async function schemaSharing(): Promise<{ builtBy: string; sameSchemas: boolean }> {
  const first = builtOnce('test:schema-sharing', () => ({ runId: workflowInfo().runId, schemas: sharedSchemas() }));
  return { builtBy: first.runId, sameSchemas: sharedSchemas().every((schema, i) => schema === first.schemas[i]) };
}

/**
 * A string format that tests an expression kept in zod's module: what the lint rule keeps out of
 * workflows/, run here on purpose. Returns what it threw (caught, so the workflow task does not fail).
 */
export async function zodEmailCheck(value: string): Promise<{ accepted?: boolean; threw?: string }> {
  try {
    return { accepted: z.string().email().safeParse(value).success };
  } catch (err) {
    return { threw: err instanceof Error ? `${err.name}: ${err.message}` : String(err) };
  }
}
