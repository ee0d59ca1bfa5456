import { Context } from '@temporalio/activity';
import type { Progress } from '@modelcontextprotocol/sdk/types.js';
import { toolProgressSignal } from '../../workflows/messages';
import type { ToolRunContext } from '../tools/native-tool';

/** At most one progress signal per call in this interval (the last one, at completion, always goes). */
const MIN_INTERVAL_MS = 100;
/** Progress messages are the server's text: kept short, like everything that reaches history. */
const MAX_MESSAGE_CHARS = 500;

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
  /** Sends what is still waiting; call once the tool call is over. */
  close(): Promise<void>;
}

/**
 * Turns MCP progress notifications into `toolProgress` signals to the
 * session, which checks them and publishes `tool_call_progress` events
 * itself (only the workflow publishes events). Signals go out one at a time,
 * in order, numbered, at most one per interval; calls without progress cost
 * nothing.
 */
export function progressReporter(ctx: ToolRunContext, redactText: (text: string) => string): ProgressReporter {
  let lastAt = 0;
  let seq = 0;
  let pending: Progress | null = null;
  let sending: Promise<void> = Promise.resolve();
  const { turnId, toolCallId } = ctx;
  // Progress arrives in the transport's callbacks, outside the activity's async context,
  // so the activity (client and workflow id) is captured now, while run() is in it.
  const activity = currentActivity();
  const workflowId = activity?.info.workflowExecution?.workflowId;
  const publish = (p: Progress) => {
    pending = null;
    lastAt = Date.now();
    if (!activity || !turnId || !toolCallId || !workflowId || !Number.isFinite(p.progress)) return;
    seq += 1;
    const input = {
      turnId,
      toolCallId,
      seq,
      progress: p.progress,
      ...(p.total !== undefined && Number.isFinite(p.total) ? { total: p.total } : {}),
      ...(typeof p.message === 'string' ? { message: redactText(p.message).slice(0, MAX_MESSAGE_CHARS) } : {}),
    };
    const handle = activity.client.workflow.getHandle(workflowId);
    // A lost progress signal costs a progress bar a step, never the call: failures are dropped.
    sending = sending.then(() => handle.signal(toolProgressSignal, input)).catch(() => undefined);
  };
  return {
    onprogress(p) {
      ctx.heartbeat();
      if (Date.now() - lastAt >= MIN_INTERVAL_MS || (p.total !== undefined && p.progress >= p.total)) publish(p);
      else pending = p;
    },
    async close() {
      if (pending) publish(pending);
      await sending;
    },
  };
}
