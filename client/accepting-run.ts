import { WorkflowClient, WorkflowUpdateStage, type Client, type WorkflowClientInterceptor } from '@temporalio/client';
import { temporal } from '@temporalio/proto';

/*
 * A message in one call. `executeUpdate` asks the server to hold its first
 * call until the update completes, which is how a short turn answers: one
 * round trip, where accept-then-poll takes two (the second landing just as the
 * turn's first model call starts). When the server lets that call go first (a
 * turn longer than its long poll, about 20 s), the SDK polls for the result on
 * whichever run is current: a session that continued as new meanwhile answers
 * "not found" for a message it did run, and a caller could send it again. The
 * interceptor here takes over at that point and polls the run that accepted
 * the update, named by the server's answer, as `startUpdate(...).result()`
 * does. An error from that poll comes after acceptance, so it is wrapped in
 * `AcceptedUpdateUnanswered`: never read as "no run, send it again".
 */

const COMPLETED = temporal.api.enums.v1.UpdateWorkflowExecutionLifecycleStage.UPDATE_WORKFLOW_EXECUTION_LIFECYCLE_STAGE_COMPLETED;

/** A poll for an accepted update's result failed: the message was delivered, so it must not be sent again. */
export class AcceptedUpdateUnanswered extends Error {
  constructor(
    readonly updateId: string,
    readonly runId: string,
    override readonly cause: unknown,
  ) {
    super(`update ${updateId} was accepted by run ${runId}, then its result could not be read: ${cause instanceof Error ? cause.message : String(cause)}`);
    this.name = 'AcceptedUpdateUnanswered';
  }
}

function acceptingRunInterceptor(sibling: () => WorkflowClient): WorkflowClientInterceptor {
  return {
    async startUpdate(input, next) {
      const output = await next(input);
      // `waitForStage` is on the SDK's input at run time (1.23), not in its type. Only `executeUpdate` waits for completion.
      const stage = (input as { waitForStage?: unknown }).waitForStage;
      if (output.outcome || stage !== WorkflowUpdateStage.COMPLETED) return output;
      const client = sibling();
      const request = {
        namespace: client.options.namespace,
        identity: client.options.identity,
        updateRef: { workflowExecution: { workflowId: input.workflowExecution.workflowId, runId: output.workflowRunId }, updateId: output.updateId },
        waitPolicy: { lifecycleStage: COMPLETED },
      };
      for (;;) {
        let response: temporal.api.workflowservice.v1.IPollWorkflowExecutionUpdateResponse;
        try {
          response = await client.workflowService.pollWorkflowExecutionUpdate(request);
        } catch (err) {
          throw new AcceptedUpdateUnanswered(output.updateId, output.workflowRunId, err);
        }
        if (response.outcome) return { ...output, outcome: response.outcome };
      }
    },
  };
}

/**
 * A workflow client on `client`'s connection and options whose
 * `executeUpdate` waits for the result on the run that accepted the update.
 * Its interceptor comes first, so the caller's own (tracing, say) stay
 * between it and the server. Undefined where that cannot be built faithfully
 * (interceptors given in the SDK's older factory form, or payloads kept in
 * external storage, which the raw poll would not resolve): callers then
 * accept first and poll, as before.
 */
export function acceptingRunClient(client: Client): WorkflowClient | undefined {
  const base = client.workflow;
  const own = base.options.interceptors;
  if (!Array.isArray(own)) return undefined;
  if (base.options.loadedDataConverter.externalStorage) return undefined;
  // The interceptor reads the client it belongs to, made just below.
  const sibling: WorkflowClient = new WorkflowClient({
    ...base.options,
    connection: base.connection,
    dataConverter: base.options.loadedDataConverter,
    interceptors: [acceptingRunInterceptor(() => sibling), ...own],
  });
  return sibling;
}
