/**
 * Custom search attributes the session workflows set, so sessions can be
 * found by user, tenant and status in the Web UI and `temporal workflow list`.
 * docker-compose.yml registers the same set.
 */
export const SESSION_SEARCH_ATTRIBUTES = {
  SessionUser: 'Keyword',
  SessionTenant: 'Keyword',
  SessionStatus: 'Keyword',
  SessionPendingApprovals: 'Int',
} as const;

/** `--search-attribute Name=Type` pairs for `temporal server start-dev`. */
export function searchAttributeFlags(): string[] {
  return Object.entries(SESSION_SEARCH_ATTRIBUTES).flatMap(([name, type]) => ['--search-attribute', `${name}=${type}`]);
}
