import { Context } from '@temporalio/activity';
import type { ElicitRequest, ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { elicitationSchemaProblem, INPUT_LIMITS, RequestedSchema, type InputState } from '../../workflows/input-request';
import { getInputQuery, inputRequestedSignal } from '../../workflows/messages';
import { describeZodError } from '../../workflows/input-guard';
import type { ToolRunContext } from '../tools/native-tool';
import type { McpLogger } from './mcp-log';

/** Asks the person behind the call that is running; resolves with what goes back to the server. */
export type ElicitHandler = (params: ElicitRequest['params'], signal?: AbortSignal) => Promise<ElicitResult>;

const CANCEL: ElicitResult = { action: 'cancel' };

/**
 * How long after a call was given up on (its timeout, an interrupt) the
 * server's questions are not routed: the server may not honour
 * `notifications/cancelled` and go on with that call, and its question would
 * reach whichever call is in flight then, maybe another user's.
 */
export const ABANDONED_CALL_WINDOW_MS = 10 * 60_000;

/**
 * Routes a server's `elicitation/create` to the tool call that caused it.
 * The protocol does not say which of our requests a server request belongs
 * to (stdio has no such link at all), and one connection serves every
 * session of the worker. So a question is routed only when exactly one call
 * is in flight on the connection, and no call was given up on lately; else
 * it is cancelled and logged rather than risk asking one user about another
 * user's call.
 */
export class ElicitationBroker {
  /** The calls in flight, with whose they are (tenant and user). */
  private readonly calls = new Map<ElicitHandler, string>();
  /** Whose calls were given up on (timed out, interrupted), and until when each may still run on the server and ask. */
  private readonly abandoned = new Map<string, number>();

  constructor(
    private readonly server: string,
    private readonly log: McpLogger,
    private readonly abandonedWindowMs = ABANDONED_CALL_WINDOW_MS,
  ) {}

  /**
   * Registers a call for its duration; returns the release, told whether the call was given up on before the
   * server answered it (a server may ignore the cancellation and go on, and ask later).
   */
  enter(handler: ElicitHandler, owner = ''): (abandoned?: boolean) => void {
    this.calls.set(handler, owner);
    return (abandoned = false) => {
      this.calls.delete(handler);
      if (abandoned) this.abandoned.set(owner, Date.now() + this.abandonedWindowMs);
    };
  }

  async route(request: ElicitRequest, signal?: AbortSignal): Promise<ElicitResult> {
    if (request.params.mode === 'url') return CANCEL;
    const [entry, ...others] = [...this.calls];
    const now = Date.now();
    for (const [owner, until] of this.abandoned) if (until <= now) this.abandoned.delete(owner);
    // A question may be a call's that was given up on: routed to someone else's call, it would ask another user about
    // it. The same user's own call may take it (what it shows is theirs).
    if (entry && [...this.abandoned.keys()].some((owner) => owner !== entry[1])) {
      this.log.warn(`[${this.server}] elicitation/create within ${Math.round(this.abandonedWindowMs / 1000)} s of another user's call given up on before the server answered it; cannot tell which one asked, answered "cancel"`);
      return CANCEL;
    }
    const only = entry?.[0];
    if (!only) {
      this.log.warn(`[${this.server}] elicitation/create with no tool call in flight; answered "cancel"`);
      return CANCEL;
    }
    if (others.length > 0) {
      this.log.warn(`[${this.server}] elicitation/create while ${this.calls.size} calls are in flight; cannot tell which one asked, answered "cancel"`);
      return CANCEL;
    }
    return only(request.params, signal);
  }
}

/** The running activity, or null outside one (unit tests). */
function currentActivity(): Context | null {
  try {
    return Context.current();
  } catch {
    return null;
  }
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    }, { once: true });
  });

export interface DurableAskOptions {
  server: string;
  /** Removes configured secrets from the server's text. */
  clean(text: string): string;
  log: McpLogger;
  /** How often the session is asked for the answer. */
  pollMs?: number;
  /** How long an input may stay unknown to the session (its signal not yet handled) before we give up. */
  unknownGraceMs?: number;
}

/**
 * Makes a server's question a durable wait in the session: the activity
 * signals `inputRequested` with `<toolCallId>:<n>` (the n-th question of
 * this attempt, so a retried attempt uses the same ids), then polls the
 * session with `getInput` until a person answers, the wait times out
 * (`cancel`), or the call is cancelled. The session holds question and
 * answer, so a worker that dies during the wait loses nothing: the retried
 * attempt calls the tool again, the server asks again, and the answer is
 * either there already or still awaited, under the same id.
 */
export function durableAsker(ctx: ToolRunContext, options: DurableAskOptions): ElicitHandler {
  const activity = currentActivity();
  const workflowId = activity?.info.workflowExecution?.workflowId;
  const startedAt = Date.now();
  let asked = 0;
  return async (params, callSignal) => {
    const { turnId, toolCallId } = ctx;
    // A local activity holds its workflow task: the session could not take the answer while it waits.
    if (!activity || !workflowId || !turnId || !toolCallId || activity.info.isLocal || params.mode === 'url') {
      options.log.warn(`[${options.server}] elicitation/create outside a session's regular tool activity; answered "cancel"`);
      return CANCEL;
    }
    asked += 1;
    const inputId = `${toolCallId}:${asked}`;
    const schema = RequestedSchema.safeParse(params.requestedSchema);
    if (!schema.success) {
      options.log.warn(`[${options.server}] elicitation/create with a schema we do not take (${describeZodError(schema.error)}); answered "cancel"`);
      return CANCEL;
    }
    const unflat = elicitationSchemaProblem(schema.data);
    if (unflat) {
      options.log.warn(`[${options.server}] elicitation/create with a schema MCP does not allow (${unflat}); answered "cancel"`);
      return CANCEL;
    }
    const message = options.clean(params.message).slice(0, INPUT_LIMITS.messageChars);
    const remaining = activity.info.startToCloseTimeoutMs - (Date.now() - startedAt) - 1_000;
    const handle = activity.client.workflow.getHandle(workflowId);
    await handle.signal(inputRequestedSignal, {
      turnId,
      toolCallId,
      inputId,
      server: options.server,
      message,
      requestedSchema: schema.data,
      waitMs: Math.max(1_000, remaining),
    });
    const abort = AbortSignal.any([ctx.signal, ...(callSignal ? [callSignal] : [])]);
    const pollMs = options.pollMs ?? 250;
    let unknownSince: number | null = null;
    while (!abort.aborted) {
      ctx.heartbeat();
      let state: InputState;
      try {
        state = await handle.query(getInputQuery, { inputId });
      } catch (err) {
        // A query can fail while the session's worker restarts; keep waiting within the call's own timeout.
        options.log.debug(`[${options.server}] getInput ${inputId} failed: ${err instanceof Error ? err.message : String(err)}`);
        await sleep(pollMs * 4, abort);
        continue;
      }
      if (state.state === 'answered') {
        return state.action === 'accept' ? { action: 'accept', content: state.content ?? {} } : { action: state.action };
      }
      if (state.state === 'unknown') {
        unknownSince ??= Date.now();
        if (Date.now() - unknownSince > (options.unknownGraceMs ?? 10_000)) {
          options.log.warn(`[${options.server}] the session did not take input ${inputId}; answered "cancel"`);
          return CANCEL;
        }
      } else {
        unknownSince = null;
      }
      await sleep(pollMs, abort);
    }
    return CANCEL;
  };
}
