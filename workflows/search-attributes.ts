import { defineSearchAttributeKey } from '@temporalio/common';

/**
 * The search attributes sessions are found by in the Web UI. Registered by
 * the local stack (and docker-compose); set at start by the client and kept
 * current by the workflow.
 */
export const SessionUserKey = defineSearchAttributeKey('SessionUser', 'KEYWORD');
export const SessionTenantKey = defineSearchAttributeKey('SessionTenant', 'KEYWORD');
export const SessionStatusKey = defineSearchAttributeKey('SessionStatus', 'KEYWORD');
/** How many tool calls wait for a person (0 when none), so a list can filter `SessionPendingApprovals > 0`. */
export const SessionPendingApprovalsKey = defineSearchAttributeKey('SessionPendingApprovals', 'INT');
