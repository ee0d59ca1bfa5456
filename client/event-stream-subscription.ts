import { WorkflowStreamClient } from '@temporalio/workflow-streams/client';
import type { Client } from '@temporalio/client';

/** What subscribe() keeps of the run it follows (TypeScript-private in the library). */
interface RunTracking {
  polledRunId: string | undefined;
  followContinueAsNew(): Promise<boolean>;
}

/**
 * A stream client for one session's workflow whose subscribe() ends when the
 * session's last run closes, however quickly that run closed.
 *
 * @temporalio/workflow-streams 1.23.0 (pinned) follows a continue-as-new by
 * describing the run its last poll was admitted to, and keeps that run id
 * after moving on. When the next run closes before any poll is admitted to
 * it (a session ended or archived right after continuing as new), each poll
 * fails because the workflow is closed, the old run still says
 * CONTINUED_AS_NEW, and subscribe() polls again at once, forever: the reader
 * gets nothing more, never reaches the archive, and spins against the
 * server. Forgetting the old run once it has been followed makes the next
 * check describe the latest run, which says the stream is over.
 */
export function sessionStreamClient(client: Client, workflowId: string): WorkflowStreamClient {
  const stream = WorkflowStreamClient.create(client, workflowId);
  const tracking = stream as unknown as RunTracking;
  if (typeof tracking.followContinueAsNew !== 'function') return stream;
  const follow = tracking.followContinueAsNew.bind(stream);
  tracking.followContinueAsNew = async () => {
    const moved = await follow();
    if (moved) tracking.polledRunId = undefined;
    return moved;
  };
  return stream;
}
