import { Context, type Info } from '@temporalio/activity';
import { WithStartWorkflowOperation } from '@temporalio/client';
import { workflowIdFor } from '../../workflows/messages';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import type { SendMessageInput, SessionOptionsInput, TurnResult } from '../../workflows/session-types';
import { eventually } from '../support/test-env';
import type { ScenarioContext } from './scenario';

/** Sends a message (starting the session) and waits for its turn to finish. */
export async function say(ctx: ScenarioContext, text: string, extra: { options?: Partial<SessionOptionsInput>; message?: Partial<SendMessageInput> } = {}): Promise<TurnResult> {
  const { turnId } = await ctx.env.agent.send(ctx.options(extra.options), { text, ...extra.message });
  return ctx.env.agent.waitForTurn(ctx.sessionId, turnId);
}

/**
 * Sends a message again as another SDK or the CLI would after losing its answer: the same clientMessageId under
 * another update id, starting the session if it is closed. Answers with the turn the session gave it.
 */
export async function resendUnderAnotherUpdateId(ctx: ScenarioContext, text: string, clientMessageId: string): Promise<{ turnId: string }> {
  const start = new WithStartWorkflowOperation('agentSession', { workflowId: workflowIdFor(ctx.sessionId), taskQueue: ctx.env.taskQueue, args: [{ options: ctx.options() }], workflowIdConflictPolicy: 'USE_EXISTING' });
  return (await ctx.env.client.workflow.executeUpdateWithStart('sendMessage', {
    args: [{ text, clientMessageId, principal: { tenant: 'acme', user: 'ana' } }],
    updateId: `retry-${ctx.sessionId}`,
    startWorkflowOperation: start,
  })) as { turnId: string };
}

/** Scripts a destructive `local_wipe` call (it needs confirmation), then a text answer once its result is in. */
export function scriptWipe(ctx: ScenarioContext, answer = 'Done.'): void {
  ctx.env.model.script(
    [
      { respond: { kind: 'tool_calls', calls: [{ id: `call_wipe_${ctx.sessionId}`, name: 'local_wipe', arguments: { confirmText: 'all' } }] } },
      { match: { hasToolResults: true }, respond: { kind: 'text', text: answer } },
    ],
    { lane: ctx.sessionId },
  );
}

/** The id of the tool call the session holds for confirmation, once it does. */
export async function pendingCall(ctx: ScenarioContext): Promise<string> {
  const view = await eventually(async () => {
    const v = await ctx.env.agent.getSession(ctx.sessionId);
    return v.pendingConfirmations.length > 0 ? v : null;
  }, 'a pending confirmation');
  return view.pendingConfirmations[0]!.toolCallId;
}

/**
 * A fault injector for a scenario's worker (`env.activityInterceptors`):
 * `fault` sees each activity's info and arguments and returns the error to
 * fail that attempt with, or nothing to let it run.
 */
export function activityFault(fault: (info: Info, args: unknown[]) => Error | undefined): ActivityInterceptorsFactory {
  return () => ({
    inbound: {
      async execute(input, next) {
        const err = fault(Context.current().info, input.args);
        if (err) throw err;
        return next(input);
      },
    },
  });
}
