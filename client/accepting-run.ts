import { WorkflowClient, WorkflowUpdateStage, type Client, type WorkflowClientInterceptor } from '@temporalio/client';

/*
 * A message in one call. `executeUpdate` asks the server to hold its first
 * call until the update completes, which is how a short turn answers: one
 * round trip, where accept-then-poll takes two (the second landing just as the
 * turn's first model call starts). When the server lets that call go first (a
 * turn longer than its long poll, about 20 s), the SDK polls for the result on
 * whichever run is current: a session that continued as new meanwhile answers
 * "not found" for a message it did run, and a caller could send it again. The
 * interceptor here stops there instead, with `AcceptedWithoutResult` naming the
 * run that accepted the update (the server's answer names it); the caller
 * reads the result from that run with the SDK's update handle, as
 * `startUpdate(...).result()` does, with the SDK's own decoding and errors.
 */

/** The update was accepted by `runId`, and the server answered before its result: read it from that run. */
export class AcceptedWithoutResult extends Error {
  constructor(
    readonly updateId: string,
    readonly runId: string,
  ) {
    super(`update ${updateId} was accepted by run ${runId}; its result is to be read from that run`);
    this.name = 'AcceptedWithoutResult';
  }
}

function acceptingRunInterceptor(): WorkflowClientInterceptor {
  return {
    async startUpdate(input, next) {
      const output = await next(input);
      // `waitForStage` is on the SDK's input at run time (1.23), not in its type. Only `executeUpdate` waits for completion.
      const stage = (input as { waitForStage?: unknown }).waitForStage;
      if (output.outcome || stage !== WorkflowUpdateStage.COMPLETED) return output;
      throw new AcceptedWithoutResult(output.updateId, output.workflowRunId);
    },
  };
}

/**
 * A workflow client on `client`'s connection and options whose
 * `executeUpdate` either answers with the update's result or throws
 * `AcceptedWithoutResult`. Its interceptor comes first, so the caller's own
 * (tracing, say) stay between it and the server. Undefined when the caller's
 * interceptors are in the SDK's older factory form, which cannot be extended
 * faithfully: callers then accept first and poll, as before.
 */
export function acceptingRunClient(client: Client): WorkflowClient | undefined {
  const base = client.workflow;
  const own = base.options.interceptors;
  if (!Array.isArray(own)) return undefined;
  return new WorkflowClient({ ...base.options, interceptors: [acceptingRunInterceptor(), ...own] });
}
