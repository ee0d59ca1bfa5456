import { ApplicationFailure, proxyActivities } from '@temporalio/workflow';
import type { UsageActivities } from '../activities/usage/usage-activities';
import type { UsageQuery, UsageSummary } from '../activities/usage/usage-store';
import { FailureType } from './failure-types';
import { Principal, hasTenantRole, notAuthorized } from './principal';

const { summarizeUsage } = proxyActivities<UsageActivities>({ startToCloseTimeout: '1 minute', retry: { maximumAttempts: 3, initialInterval: '500 milliseconds', nonRetryableErrorTypes: [FailureType.SessionInputInvalid] } });

export interface ReadUsageInput {
  tenant: string;
  /** One user's usage; without it (and without sessionId), the whole tenant's (admins). */
  user?: string;
  sessionId?: string;
  days?: number;
  principal?: Principal;
}

/**
 * Token usage and its cost from the price table, by day and model, for the
 * client. A user reads their own (all their sessions, or one); an admin of
 * the tenant reads anyone's in it, or the tenant's total.
 */
export async function readUsage(input: ReadUsageInput): Promise<UsageSummary> {
  const principal = Principal.safeParse(input?.principal);
  if (!principal.success) throw notAuthorized('Not authorized: a principal ({ tenant, user }) is required to read usage.');
  const p = principal.data;
  const text = (v: unknown, max: number) => typeof v === 'string' && v.length > 0 && v.length <= max;
  if (!text(input.tenant, 128) || (input.user !== undefined && !text(input.user, 128)) || (input.sessionId !== undefined && !text(input.sessionId, 128))) {
    throw ApplicationFailure.create({ message: 'readUsage needs { tenant, user?, sessionId?, days? } with non-empty names of at most 128 characters', type: FailureType.SessionInputInvalid, nonRetryable: true });
  }
  if (input.days !== undefined && (!Number.isInteger(input.days) || input.days < 1 || input.days > 366)) {
    throw ApplicationFailure.create({ message: `days must be a whole number from 1 to 366, got ${typeof input.days === 'number' ? String(input.days) : `a ${input.days === null ? 'null' : typeof input.days}`}`, type: FailureType.SessionInputInvalid, nonRetryable: true });
  }
  const admin = hasTenantRole(input.tenant, p, 'admin');
  const own = p.tenant === input.tenant && input.user === p.user;
  if (!admin && !own && !(input.sessionId && p.tenant === input.tenant && input.user === undefined)) {
    throw notAuthorized(`Not authorized: ${p.tenant}/${p.user} may read their own usage; ${input.user ? `${input.tenant}/${input.user}'s` : `the tenant ${input.tenant}'s`} needs the tenant's admin role.`);
  }
  const query: UsageQuery = {
    tenant: input.tenant,
    // A user asking about a session sees only what their own calls used.
    ...(admin ? (input.user ? { user: input.user } : {}) : { user: p.user }),
    ...(input.sessionId ? { sessionId: input.sessionId } : {}),
    days: input.days ?? 1,
  };
  return summarizeUsage(query);
}
