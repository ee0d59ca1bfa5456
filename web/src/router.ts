import { useEffect, useState } from 'preact/hooks';
import { exhausted } from './never';

/** The pages, as the hash names them; the hash keeps the page across a reload. */
export type Route =
  | { page: 'sessions' }
  | { page: 'session'; sessionId: string }
  | { page: 'approvals' }
  | { page: 'memories'; tenant?: string; user?: string }
  | { page: 'dashboard' }
  | { page: 'not-found'; path: string };

export function parseRoute(hash: string): Route {
  const path = hash.replace(/^#/, '') || '/sessions';
  const parts = path.split('/').filter(Boolean).map((p) => {
    try {
      return decodeURIComponent(p);
    } catch {
      return p;
    }
  });
  const [head, ...rest] = parts;
  if (head === 'sessions' && rest.length === 0) return { page: 'sessions' };
  if (head === 'sessions' && rest.length === 1) return { page: 'session', sessionId: rest[0]! };
  if (head === 'approvals' && rest.length === 0) return { page: 'approvals' };
  if (head === 'memories' && rest.length === 0) return { page: 'memories' };
  if (head === 'memories' && rest.length === 2) return { page: 'memories', tenant: rest[0]!, user: rest[1]! };
  if (head === 'dashboard' && rest.length === 0) return { page: 'dashboard' };
  return { page: 'not-found', path };
}

export function hrefFor(route: Route): string {
  switch (route.page) {
    case 'sessions':
    case 'approvals':
    case 'dashboard':
      return `#/${route.page}`;
    case 'session':
      return `#/sessions/${encodeURIComponent(route.sessionId)}`;
    case 'memories':
      return route.tenant && route.user ? `#/memories/${encodeURIComponent(route.tenant)}/${encodeURIComponent(route.user)}` : '#/memories';
    case 'not-found':
      return `#${route.path}`;
    default:
      exhausted(route);
      return '#/sessions';
  }
}

export function navigate(route: Route): void {
  window.location.hash = hrefFor(route);
}

/** The current route, following hash changes. */
export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(window.location.hash));
  useEffect(() => {
    const onChange = () => setRoute(parseRoute(window.location.hash));
    window.addEventListener('hashchange', onChange);
    return () => window.removeEventListener('hashchange', onChange);
  }, []);
  return route;
}
