import { Context } from '@temporalio/activity';
import type { Progress } from '@modelcontextprotocol/sdk/types.js';
import { toolProgressSignal } from '../../workflows/messages';
import type { ToolRunContext } from '../tools/native-tool';

/**
 * Progress signals of one call are at least this far apart: 100 ms at
 * first, 10 ms more for each one sent, at most 5 s. Each signal costs the
 * session's run four history events (the signal and a workflow task): at a
 * flat 100 ms a ten-minute call wrote 24,000, and a server that reported
 * completion over and over (which went out at once, whatever the interval)
 * could write without limit, until the server ended the run. A ten-minute
 * call now sends about 350. A notification held back goes out when the
 * interval has passed, or when the call ends.
 */
export function progressIntervalMs(sent: number): number {
  return Math.max(100, Math.min(sent * 10, 5_000));
}
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
  let later: NodeJS.Timeout | undefined;
  let closed = false;
  let sending: Promise<void> = Promise.resolve();
  const { turnId, toolCallId } = ctx;
  // Progress arrives in the transport's callbacks, outside the activity's async context,
  // so the activity (client and workflow id) is captured now, while run() is in it.
  const activity = currentActivity();
  const workflowId = activity?.info.workflowExecution?.workflowId;
  const publish = (p: Progress) => {
    pending = null;
    clearTimeout(later);
    later = undefined;
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
      // The transport may deliver a notification after the call is over: the call's progress is done.
      if (closed) return;
      ctx.heartbeat();
      const wait = lastAt + progressIntervalMs(seq) - Date.now();
      if (wait <= 0) return publish(p);
      // Only the newest waits; it goes out once the interval has passed, if nothing newer came first.
      pending = p;
      later ??= setTimeout(() => {
        later = undefined;
        if (pending) publish(pending);
      }, wait);
    },
    async close() {
      closed = true;
      clearTimeout(later);
      later = undefined;
      if (pending) publish(pending);
      await sending;
    },
  };
}
