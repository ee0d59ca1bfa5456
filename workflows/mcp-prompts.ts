import { proxyActivities } from '@temporalio/workflow';
import type { ExpandPromptInput, ExpandPromptResult, ListPromptsResult, PromptActivities } from '../activities/mcp/mcp-prompts';
import { z } from 'zod';
import { FailureType } from './failure-types';
import { describeZodError, invalidInput } from './input-guard';

const { listMcpPrompts, expandMcpPrompt } = proxyActivities<PromptActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { maximumAttempts: 3, initialInterval: '500 milliseconds', nonRetryableErrorTypes: [FailureType.ConfigInvalid, FailureType.ToolNotFound, FailureType.ToolInputInvalid] },
});

/**
 * The prompts of every MCP server the workers know, for the client: like the
 * memory workflows, the client reaches the servers only through a worker, so
 * it needs no server credentials.
 */
export async function listPrompts(): Promise<ListPromptsResult> {
  return listMcpPrompts({});
}

/** One prompt expanded with its arguments, as the text of a user message. */
export async function expandPrompt(input: ExpandPromptInput): Promise<ExpandPromptResult> {
  // A raw start (another SDK, the CLI) may send anything: bad input fails the run at once, named, with no activity retried.
  const parsed = ExpandPromptShape.safeParse(input);
  if (!parsed.success) throw invalidInput(`Invalid expandPrompt input: ${describeZodError(parsed.error)}`);
  return expandMcpPrompt(parsed.data);
}

const ExpandPromptShape = z.object({
  server: z.string().min(1).max(200),
  name: z.string().min(1).max(200),
  arguments: z.record(z.string(), z.string().max(100_000)).optional(),
});
