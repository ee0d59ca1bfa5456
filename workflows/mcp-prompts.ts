import { proxyActivities } from '@temporalio/workflow';
import type { ExpandPromptInput, ExpandPromptResult, ListPromptsResult, PromptActivities } from '../activities/mcp/mcp-prompts';
import { FailureType } from './failure-types';

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
  return expandMcpPrompt(input);
}
