import type { Client } from '@temporalio/client';
import type { AgentClient } from '../agent-client';
import { SessionNotFoundError } from '../errors';
import type { SessionView } from '../../workflows/session-types';

export type SessionLookup = { kind: 'found'; view: SessionView } | { kind: 'new' } | { kind: 'error'; message: string };

/** Whether the session exists, without throwing: a chat starts either way. */
export async function lookUpSession(agent: AgentClient, sessionId: string): Promise<SessionLookup> {
  try {
    return { kind: 'found', view: await agent.getSession(sessionId) };
  } catch (err) {
    if (err instanceof SessionNotFoundError) return { kind: 'new' };
    return { kind: 'error', message: err instanceof Error ? err.message : String(err) };
  }
}

/** Workers that polled the workflow task queue recently, or null when the server would not say. */
export async function workflowPollers(client: Client, namespace: string, taskQueue: string): Promise<number | null> {
  try {
    const response = await client.workflowService.describeTaskQueue({ namespace, taskQueue: { name: taskQueue } });
    return response.pollers?.length ?? 0;
  } catch {
    return null;
  }
}
