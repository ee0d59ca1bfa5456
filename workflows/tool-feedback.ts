import { FailureType } from './failure-types';

/** "<what happened> Next step: <what to do>", as activities/mcp/mcp-errors.ts and tools/tool-errors.ts write it. */
const STATED_NEXT_STEP = ' Next step: ';

/**
 * Text the model reads when a tool call did not produce a result. Every
 * message says what happened and what to do next, so the model converges
 * instead of retrying the same call with new arguments.
 */
export function toolErrorContent(type: string, detail: string): string {
  // A failure that states its own next step (MCP and native tool errors do) knows more than its type:
  // that step is the one the model reads, so the two never disagree.
  // The last marker: ours ends the message, while a server's error text quoted before it may hold one too.
  const at = detail.lastIndexOf(STATED_NEXT_STEP);
  const stated = at >= 0 ? detail.slice(at + STATED_NEXT_STEP.length).trim() : '';
  return JSON.stringify({ error: { type, message: detail, next_step: stated || nextStepFor(type) } });
}

export function nextStepFor(type: string): string {
  switch (type) {
    case FailureType.ToolInputInvalid:
      return 'Fix the listed fields to match the tool schema and call the tool again; ask the user if a value is unknown.';
    case FailureType.ToolNotAllowed:
      return 'This tool is not available in this session. Do not call it again; answer without it or tell the user it is not permitted.';
    case FailureType.ToolNotFound:
      return 'There is no tool with this name. Use only the tools you were given.';
    case FailureType.ToolTimeout:
      return 'The service is slow or unavailable right now. Do not retry immediately; tell the user it timed out and offer to try again later or another way.';
    case FailureType.ToolPermissionDenied:
      return 'Do not retry this operation. Tell the user they lack permission and should contact an administrator.';
    case FailureType.ToolDeclined:
      return 'The user declined this action. Do not run it again unless the user asks; acknowledge and ask how they want to proceed.';
    case FailureType.ToolChanged:
      return 'The tool changed while this call waited, so it was not run. Call it again if it is still needed: it will be checked, and confirmed if it needs to be, against its new definition.';
    case FailureType.ToolFailed:
      return 'The tool failed. Retry at most once if the error looks transient; otherwise explain the failure to the user.';
    default:
      return 'Explain the problem to the user and ask how to proceed.';
  }
}
