import { Context } from '@temporalio/activity';
import { WorkflowStreamClient } from '@temporalio/workflow-streams/client';
import type { Progress } from '@modelcontextprotocol/sdk/types.js';
import type { AgentEvent } from '../../workflows/events';
import { EVENTS_TOPIC } from '../../workflows/messages';
import type { ToolRunContext } from '../tools/native-tool';

/** At most one progress event per call in this interval (the last one, at completion, always goes). */
const MIN_INTERVAL_MS = 100;

/** The running activity, or null when a tool is run outside one (unit tests). */
function currentActivity(): Context | null {
  try {
    return Context.current();
  } catch {
    return null;
  }
}

export interface ProgressReporter {
  onprogress(progress: Progress): void;
  /** Flushes what was published; call once the tool call is over. */
  close(): Promise<void>;
}

/**
 * Turns MCP progress notifications into `tool_call_progress` events on the
 * session's stream. The stream client is created on the first notification,
 * so calls without progress cost nothing.
 */
export function progressReporter(ctx: ToolRunContext, toolName: string, redactText: (text: string) => string): ProgressReporter {
  let client: WorkflowStreamClient | null = null;
  let lastAt = 0;
  let pending: Progress | null = null;
  const { turnId, toolCallId } = ctx;
  // Progress arrives in the transport's callbacks, outside the activity's async context,
  // so the activity (client and workflow id) is captured now, while run() is in it.
  const activity = currentActivity();
  const workflowId = activity?.info.workflowExecution?.workflowId;
  const publish = (p: Progress) => {
    if (!activity || !turnId || !toolCallId || !workflowId) return;
    client ??= WorkflowStreamClient.create(activity.client, workflowId, { batchInterval: MIN_INTERVAL_MS });
    const event: AgentEvent = {
      type: 'tool_call_progress',
      sessionId: ctx.sessionId,
      at: new Date().toISOString(),
      turnId,
      toolCallId,
      toolName,
      progress: p.progress,
      ...(p.total !== undefined ? { total: p.total } : {}),
      ...(p.message !== undefined ? { message: redactText(p.message) } : {}),
    };
    client.topic<AgentEvent>(EVENTS_TOPIC).publish(event);
    lastAt = Date.now();
    pending = null;
  };
  return {
    onprogress(p) {
      ctx.heartbeat();
      if (Date.now() - lastAt >= MIN_INTERVAL_MS || (p.total !== undefined && p.progress >= p.total)) publish(p);
      else pending = p;
    },
    async close() {
      if (pending) publish(pending);
      if (client) await client[Symbol.asyncDispose]().catch(() => undefined);
    },
  };
}
