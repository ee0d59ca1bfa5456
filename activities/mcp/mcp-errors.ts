import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { ApplicationFailure } from '@temporalio/common';
import { FailureType } from '../../workflows/failure-types';
import { McpUnavailableError } from './mcp-failure-kinds';
import { errorText, redact } from './mcp-log';
import { MAX_MCP_MESSAGE_BYTES, McpAnswerTooLargeError, isAnswerTooLarge } from './mcp-message-bounds';

/** What the failing call was, for messages a person (and the model) can act on. */
export interface McpCallSite {
  toolName: string;
  server: string;
  timeoutMs: number;
  secrets: readonly string[];
}

const seconds = (ms: number) => `${Math.round(ms / 100) / 10} s`;

/** Characters of a server's own words kept in a failure: it goes to history, events and the model's context. */
export const MAX_FAILURE_DETAIL_CHARS = 4_000;

function clip(text: string): string {
  if (text.length <= MAX_FAILURE_DETAIL_CHARS) return text;
  return `${text.slice(0, MAX_FAILURE_DETAIL_CHARS)} [cut: ${text.length - MAX_FAILURE_DETAIL_CHARS} more characters]`;
}

/** The client's own check of a result against the tool's output schema, made after the tool ran. */
const OUTPUT_SCHEMA_FAILURE = /^(?:Structured content does not match the tool's output schema|Failed to validate structured content|Tool .* has an output schema but did not return structured content)/s;

/** The server's MCP SDK refused its own tool's result as malformed, after the tool ran (-32602, "Invalid tools/call result"). */
const SERVER_REFUSED_RESULT = /^Invalid tools\/call result/;

/** The result the client got does not follow the MCP schema (the SDK throws its zod error): the server had run the tool. */
const isMalformedResult = (err: unknown): err is Error & { issues: Array<{ path: PropertyKey[]; message: string }> } =>
  // zod's classic error is `ZodError`; the SDK parses results with zod mini (`z4mini.safeParse`), whose error is `$ZodError`.
  err instanceof Error && (err.name === 'ZodError' || err.name === '$ZodError') && Array.isArray((err as { issues?: unknown }).issues);

/** True when `err` or one of its causes is an instance of `type`. */
function causedBy(err: unknown, type: new (...args: never[]) => Error): boolean {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof type) return true;
  }
  return false;
}

/** Said of every failure that comes after the tool ran: repeating the call may repeat what it did. */
const RAN_NEXT_STEP = 'the call may have taken effect; do not call it again to repeat a change; check its effect another way, or tell the user the service answered in an unexpected form.';

function failure(site: McpCallSite, type: FailureType, retryable: boolean, what: string, next: string): ApplicationFailure {
  const message = redact(`${site.toolName}: ${what} Next step: ${next}`, site.secrets);
  return retryable ? ApplicationFailure.retryable(message, type) : ApplicationFailure.nonRetryable(message, type);
}

/** The tool ran and said it failed (`isError: true`). */
export function toolReportedError(site: McpCallSite, text: string): ApplicationFailure {
  return failure(
    site,
    FailureType.ToolFailed,
    false,
    `the tool reported an error: ${clip(text.trim()) || '(no details)'}.`,
    'read the error; if it names a wrong or missing argument, fix it and call the tool once more, otherwise explain the problem to the user.',
  );
}

/**
 * Maps an error from the MCP client (or our connection) to a typed failure
 * with one next step. The step is written into the message ("Next step: ..."),
 * and the session hands exactly that step to the model as `next_step`
 * (workflows/tool-feedback.ts), so the text and the field never disagree.
 */
export function mcpCallFailure(err: unknown, site: McpCallSite): ApplicationFailure {
  if (err instanceof ApplicationFailure) return err;
  if (err instanceof McpUnavailableError) {
    return failure(
      site,
      FailureType.ToolFailed,
      false,
      `${err.message}.`,
      `tell the user that the "${site.server}" service is unreachable right now and offer to try again later; do not call its tools again in this turn.`,
    );
  }
  // A JSON answer over HTTP, or one streamed as server-sent events (the transport fails its request): mcp-message-bounds.ts.
  if (causedBy(err, McpAnswerTooLargeError) || isAnswerTooLarge(err)) {
    return failure(
      site,
      FailureType.ToolFailed,
      false,
      `the tool ran, but MCP server "${site.server}" answered with more than ${Math.round(MAX_MCP_MESSAGE_BYTES / (1024 * 1024))} MB, so its answer was not read.`,
      'the call may have taken effect; do not call it again the same way; ask for less (a narrower query, one page, a smaller file), or tell the user the result was too large.',
    );
  }
  if (err instanceof McpError) {
    // The server's own McpError text carries its prefix too: "MCP error -32602: MCP error -32602: ...".
    const detail = clip(err.message.replace(/^(?:MCP error -?\d+: )+/, ''));
    if ((err.code === ErrorCode.InvalidParams || err.code === ErrorCode.InvalidRequest) && OUTPUT_SCHEMA_FAILURE.test(detail)) {
      // The tool ran: its arguments were fine, and whatever it changes may have changed.
      return failure(
        site,
        FailureType.ToolFailed,
        false,
        `the tool ran, but its result does not fit the output schema it declares: ${detail}.`,
        RAN_NEXT_STEP,
      );
    }
    if (err.code === ErrorCode.InvalidParams && SERVER_REFUSED_RESULT.test(detail)) {
      // Not the arguments: the server's own SDK checks the tool's result after running it, and refused that.
      return failure(site, FailureType.ToolFailed, false, `the tool ran, but MCP server "${site.server}" could not send its result (its MCP library refused the result as malformed): ${detail}.`, RAN_NEXT_STEP);
    }
    switch (err.code) {
      case ErrorCode.RequestTimeout:
        return failure(
          site,
          FailureType.ToolTimeout,
          false,
          `MCP server "${site.server}" did not answer within ${seconds(site.timeoutMs)}, so the request was cancelled.`,
          'the service is slow or unavailable right now; do not call it again right away; tell the user it timed out and offer to retry later or with a smaller request.',
        );
      case ErrorCode.InvalidParams:
        return failure(site, FailureType.ToolInputInvalid, false, `the server rejected the arguments: ${detail}.`, 'fix the arguments to match the tool schema and call it again.');
      case ErrorCode.ConnectionClosed:
        return failure(
          site,
          FailureType.ToolFailed,
          true,
          `the connection to MCP server "${site.server}" was lost during the call; it is being re-established.`,
          'the call may or may not have taken effect; check before repeating anything that changes data, or tell the user.',
        );
      default:
        return failure(site, FailureType.ToolFailed, false, `MCP server "${site.server}" answered with a protocol error (${err.code}): ${detail}.`, 'explain the failure to the user; do not retry the same call.');
    }
  }
  if (isMalformedResult(err)) {
    const issues = err.issues.slice(0, 3).map((i) => `${i.path.map(String).join('.') || '(result)'}: ${i.message}`).join('; ');
    return failure(site, FailureType.ToolFailed, false, `the tool ran, but MCP server "${site.server}" answered with a result that does not follow the MCP schema (${clip(issues)}).`, RAN_NEXT_STEP);
  }
  if (err instanceof StreamableHTTPError && (err.code === 401 || err.code === 403)) {
    return failure(
      site,
      FailureType.ToolPermissionDenied,
      false,
      `MCP server "${site.server}" refused our credentials (HTTP ${err.code}).`,
      'do not retry; tell the user the service rejected the credentials and an administrator should check its configuration.',
    );
  }
  return failure(
    site,
    FailureType.ToolFailed,
    true,
    `calling MCP server "${site.server}" failed: ${clip(errorText(err))}.`,
    'retry at most once if this looks transient; otherwise tell the user the service failed.',
  );
}
