/*
 * What the console reads from /v1. The session view and the events are the
 * workflow's own types (imported as types only, so nothing of the server is
 * bundled); the list shapes mirror the response schemas in api/routes.ts.
 */
import type { MemoryAuditEntry, MemoryView } from '../../activities/memory/memory-activity-types';

export type { AgentEvent } from '../../workflows/events';
export type { PendingConfirmation, SessionView, SessionCounters, Turn, TurnOutcome, Activity } from '../../workflows/session-types';

export type Role = 'user' | 'approver' | 'admin';

/** GET /v1/me */
export interface Me {
  tenant: string;
  user: string;
  roles: Role[];
  temporalNamespace: string;
  temporalUiUrl?: string;
}

/** One row of GET /v1/sessions (api/routes.ts SessionSummary). */
export interface SessionSummary {
  sessionId: string;
  tenant: string;
  user: string;
  status: string;
  pendingApprovals: number;
  version?: number;
  lastTurn?: string;
  startedAt: string;
  /** When the session's newest run closed (archived, ended); absent while it runs. */
  closedAt?: string;
}

/** One row of GET /v1/approvals (api/routes.ts PendingApproval). */
export interface PendingApproval {
  sessionId: string;
  tenant: string;
  user: string;
  toolCallId: string;
  toolName: string;
  risk: string;
  requestedAt?: string;
  confirmation: Record<string, unknown>;
}

export type MemoryStatus = MemoryView['status'];
export const MEMORY_STATUSES: readonly MemoryStatus[] = ['active', 'superseded', 'expired', 'deleted'];

/** One row of GET /v1/users/{tenant}/{user}/memories (api/routes.ts MemoryItem). */
export type Memory = MemoryView;

export type { MemoryAuditEntry };

/** GET /v1/users/{tenant}/{user}/memories/{memoryId}/audit (api/routes.ts MemoryAudit). */
export interface MemoryAudit {
  memoryId: string;
  entries: MemoryAuditEntry[];
  malformed: number;
}

/** Session statuses the list filters on (the SessionStatus search attribute; api/routes.ts LISTED_SESSION_STATUSES). */
export const SESSION_STATUSES = ['awaiting_approval', 'active', 'created', 'archived'] as const;

/** Which sessions the list covers (GET /v1/sessions?state=). */
export const SESSION_STATES = [
  { value: 'running', label: 'running' },
  { value: 'closed', label: 'closed (archived, ended)' },
  { value: 'any', label: 'running and closed' },
] as const;

/** The id rule of workflows/session-types.ts (SESSION_ID_PATTERN), repeated so the bundle does not pull in zod. */
export const SESSION_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

/** The session's workflow id (workflows/messages.ts workflowIdFor). */
export const workflowIdFor = (sessionId: string): string => `session-${sessionId}`;
