import { ApplicationFailure } from '@temporalio/workflow';
import { z } from 'zod';
import { FailureType } from './failure-types';
import { inBaseline } from './patches';

/**
 * Who is acting on a session, as asserted by the caller. Temporal access is
 * trusted infrastructure: the backend (or the API server) that holds it has
 * authenticated the person and passes their principal along; the workflow
 * checks it against the session's owner. See docs/security.md.
 */
export const PrincipalRole = z.enum(['user', 'approver', 'admin']);
export type PrincipalRole = z.infer<typeof PrincipalRole>;

export const Principal = z.object({
  tenant: z.string().min(1).max(128),
  user: z.string().min(1).max(128),
  roles: z.array(PrincipalRole).max(3).optional(),
});
export type Principal = z.infer<typeof Principal>;

/** Who a turn or a decision was by, for audit: tenant and user only. */
export const Actor = z.object({ tenant: z.string(), user: z.string() });
export type Actor = z.infer<typeof Actor>;

/** A session's owner: fixed at creation, carried across continue-as-new and kept in the archive. */
export interface Owner {
  tenant: string;
  user: string;
}

/**
 * Patch id: messages, decisions, interrupts, ends and answers must carry a
 * principal allowed to act. Signals recorded before it carried none and were
 * obeyed; on replay of those histories they still are.
 */
export const PRINCIPAL_REQUIRED = inBaseline('principal-required');

/** What a caller wants to do to a session. */
export type SessionAction = 'send' | 'decide' | 'answer' | 'interrupt' | 'end' | 'wait';

const ACTION_TEXT: Record<SessionAction, string> = {
  send: 'send messages to this session',
  decide: 'decide tool calls in this session',
  answer: 'answer inputs in this session',
  interrupt: 'interrupt this session',
  end: 'end this session',
  wait: 'wait for turns of this session',
};

/** Who may act, in words, without naming the owner. */
const WHO_MAY: Record<SessionAction, string> = {
  send: "only the session's owner",
  decide: "the session's owner, or an approver or admin of the owner's tenant",
  answer: "the session's owner, or an approver or admin of the owner's tenant",
  interrupt: "the session's owner, or an approver or admin of the owner's tenant",
  end: "the session's owner, or an admin of the owner's tenant",
  wait: "the session's owner, or an approver or admin of the owner's tenant",
};

export const actorOf = (p: Principal): Actor => ({ tenant: p.tenant, user: p.user });

export const isOwner = (owner: Owner, p: Principal): boolean => p.tenant === owner.tenant && p.user === owner.user;

/** The principal may act on sessions of this tenant with the given elevated role (admin includes approver). */
export function hasTenantRole(tenant: string, p: Principal, role: 'approver' | 'admin'): boolean {
  if (p.tenant !== tenant) return false;
  const roles = p.roles ?? [];
  return roles.includes('admin') || (role === 'approver' && roles.includes('approver'));
}

/**
 * Why this principal may not take this action on a session of this owner,
 * or undefined when it may. The message names who may act and echoes only
 * what the caller sent, never the owner's ids.
 */
export function refusalFor(owner: Owner, principal: Principal | undefined, action: SessionAction): string | undefined {
  if (!principal) return `Not authorized: a principal ({ tenant, user }) is required to ${ACTION_TEXT[action]}; ${WHO_MAY[action]} may.`;
  if (isOwner(owner, principal)) return undefined;
  const allowed =
    action === 'send' ? false : action === 'end' ? hasTenantRole(owner.tenant, principal, 'admin') : hasTenantRole(owner.tenant, principal, 'approver');
  if (allowed) return undefined;
  return `Not authorized: ${principal.tenant}/${principal.user} may not ${ACTION_TEXT[action]}; ${WHO_MAY[action]} may.`;
}

/** The failure an update validator or handler throws for a caller that may not act. */
export function notAuthorized(message: string): ApplicationFailure {
  return ApplicationFailure.nonRetryable(message, FailureType.NotAuthorized);
}
