import type { WorkflowExecutionInfo } from '@temporalio/client';
import type { z } from '@hono/zod-openapi';
import type { AgentClient } from '../client';
import { workflowIdFor } from '../workflows/messages';
import { hasTenantRole, type Principal } from '../workflows/principal';
import { SessionStatusKey, SessionTenantKey, SessionUserKey } from '../workflows/search-attributes';
import { ProblemError } from './problem';
import type { SessionSummary } from './routes';

/*
 * The sessions list, from Temporal's visibility store. A session is one
 * workflow id (`session-<id>`) with one or more runs: runs closed by
 * continue-as-new are never listed (their session goes on in the next run),
 * and a session archived and restored has older closed runs that are not its
 * state now. So each session is listed once, as its newest run says.
 */

export type SessionSummaryRow = z.infer<typeof SessionSummary>;

/** Which sessions: running ones (the default), closed ones (archived, ended), or both. */
export type SessionState = 'running' | 'closed' | 'any';

export interface SessionListFilter {
  /** Another user of the caller's tenant (approvers and admins; others always see their own). */
  user?: string;
  /** The SessionStatus search attribute. */
  status?: string;
  state: SessionState;
  limit: number;
}

const SESSION_PREFIX = workflowIdFor('');
/** Closed runs read past without listing them (older runs of restored sessions) before the list stops short. */
const MAX_CLOSED_SCANNED = 5_000;

/** True when `v` can stand in a visibility query's string literal as it is. */
const quotable = (v: string) => !/["\\]/.test(v);

/**
 * A visibility query's string literal. A quote or backslash is refused, not
 * dropped: dropped, the tenant `acme"` would list tenant `acme`'s sessions.
 */
function literal(v: string, what: string): string {
  if (!quotable(v)) throw new ProblemError(422, 'UnlistableName', `Sessions cannot be listed by a ${what} holding a quote (") or a backslash (\\).`);
  return `"${v}"`;
}

function summaryOf(info: WorkflowExecutionInfo, tenant: string): SessionSummaryRow {
  const memo = (info.memo ?? {}) as { version?: unknown; lastTurn?: unknown; pendingApprovals?: unknown };
  return {
    sessionId: info.workflowId.slice(SESSION_PREFIX.length),
    tenant: info.typedSearchAttributes.get(SessionTenantKey) ?? tenant,
    user: info.typedSearchAttributes.get(SessionUserKey) ?? '',
    status: info.typedSearchAttributes.get(SessionStatusKey) ?? 'unknown',
    pendingApprovals: typeof memo.pendingApprovals === 'number' ? memo.pendingApprovals : 0,
    ...(typeof memo.version === 'number' ? { version: memo.version } : {}),
    ...(typeof memo.lastTurn === 'string' ? { lastTurn: memo.lastTurn } : {}),
    startedAt: info.startTime.toISOString(),
    ...(info.closeTime ? { closedAt: info.closeTime.toISOString() } : {}),
  };
}

/**
 * Sessions the caller may read (their own; the tenant's for approvers and
 * admins), at most `limit`: running ones waiting for approval first, then the
 * other running ones, newest first, then closed ones, most recently closed
 * first. Each part is asked for in turn, so "waiting first" holds however
 * many sessions there are.
 */
export async function listSessions(agent: AgentClient, caller: Principal, filter: SessionListFilter): Promise<SessionSummaryRow[]> {
  const user = hasTenantRole(caller.tenant, caller, 'approver') ? filter.user : caller.user;
  // Sessions of this API's task queue only: the ones its workers run.
  const scope = [`WorkflowType = "agentSession"`, `TaskQueue = ${literal(agent.taskQueue, 'task queue')}`, `SessionTenant = ${literal(caller.tenant, 'tenant')}`];
  if (user) scope.push(`SessionUser = ${literal(user, 'user')}`);
  const status = filter.status ? [`SessionStatus = ${literal(filter.status, 'status')}`] : [];
  const pageSize = Math.min(filter.limit, 100);
  const out: SessionSummaryRow[] = [];
  const listed = new Set<string>();
  const full = () => out.length >= filter.limit;
  const add = (info: WorkflowExecutionInfo) => {
    listed.add(info.workflowId);
    out.push(summaryOf(info, caller.tenant));
  };

  const running = async (clauses: string[]) => {
    for await (const info of agent.client.workflow.list({ query: [...scope, `ExecutionStatus = "Running"`, ...clauses].join(' AND '), pageSize })) {
      if (full()) break;
      if (info.workflowId.startsWith(SESSION_PREFIX) && !listed.has(info.workflowId)) add(info);
    }
  };

  if (filter.state !== 'closed') {
    if (!filter.status || filter.status === 'awaiting_approval') await running([`SessionStatus = "awaiting_approval"`]);
    if (filter.status !== 'awaiting_approval' && !full()) await running(status);
  }
  if (filter.state !== 'running' && !full()) {
    const closed = [...scope, `ExecutionStatus != "Running"`, `ExecutionStatus != "ContinuedAsNew"`, ...status].join(' AND ');
    let batch: WorkflowExecutionInfo[] = [];
    let scanned = 0;
    const flush = async () => {
      for (const info of await newestRunsOnly(agent, scope, batch)) {
        if (full()) break;
        if (!listed.has(info.workflowId)) add(info);
      }
      batch = [];
    };
    for await (const info of agent.client.workflow.list({ query: closed, pageSize })) {
      if (full() || ++scanned > MAX_CLOSED_SCANNED) break;
      if (!info.workflowId.startsWith(SESSION_PREFIX) || listed.has(info.workflowId)) continue;
      batch.push(info);
      if (batch.length >= pageSize) await flush();
    }
    if (!full()) await flush();
  }
  return out;
}

/**
 * The closed runs that are still their session's newest run: a session
 * restored since (running again, or closed again later) is not what an older
 * run of it says. One visibility query for the whole batch.
 */
async function newestRunsOnly(agent: AgentClient, scope: string[], runs: WorkflowExecutionInfo[]): Promise<WorkflowExecutionInfo[]> {
  if (runs.length === 0) return [];
  // An id no query can name (made with raw Temporal access) cannot be shown to be its session's newest run: left out.
  const ids = [...new Set(runs.map((r) => r.workflowId))].filter(quotable);
  if (ids.length === 0) return [];
  const newest = new Map<string, { runId: string; startedAt: number }>();
  // A run that continued as new is never its session's newest: those (many, for a session with a small history budget) are not read.
  const query = [...scope, `ExecutionStatus != "ContinuedAsNew"`, `WorkflowId IN (${ids.map((id) => `"${id}"`).join(', ')})`].join(' AND ');
  for await (const info of agent.client.workflow.list({ query, pageSize: 1_000 })) {
    const seen = newest.get(info.workflowId);
    if (!seen || info.startTime.getTime() > seen.startedAt) newest.set(info.workflowId, { runId: info.runId, startedAt: info.startTime.getTime() });
  }
  return runs.filter((r, i) => newest.get(r.workflowId)?.runId === r.runId && runs.findIndex((o) => o.workflowId === r.workflowId) === i);
}
