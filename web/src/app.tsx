import { useCallback, useEffect, useMemo, useState } from 'preact/hooks';
import { Api, ApiError, asProblem, type Problem } from './api';
import type { Me, PendingApproval } from './api-types';
import { SignedContext, tokenStore, useSigned, whoIs, type Signed } from './auth';
import { Badge } from './components/badge';
import { ProblemView } from './components/problem-view';
import { exhausted } from './never';
import { ApprovalsPage } from './pages/approvals-page';
import { DashboardPage } from './pages/dashboard-page';
import { MemoriesPage } from './pages/memories-page';
import { SessionPage } from './pages/session-page';
import { SessionsPage } from './pages/sessions-page';
import { SignInPage } from './pages/sign-in-page';
import { usePoll } from './poll';
import { hrefFor, useRoute, type Route } from './router';

/** Signs in with a token from sessionStorage or the form, then shows the console. */
export function App() {
  const [token, setToken] = useState<string | null>(() => tokenStore.read());
  const [me, setMe] = useState<Me | null>(null);
  const [problem, setProblem] = useState<Problem | undefined>(undefined);
  const [checking, setChecking] = useState(token !== null);
  // Each sign-in checks the token again, the same token pasted after a failed check included.
  const [attempt, setAttempt] = useState(0);

  const signOut = useCallback((why?: Problem) => {
    tokenStore.clear();
    setToken(null);
    setMe(null);
    setProblem(why);
  }, []);
  // A refused token (at sign-in or later) signs out, showing the server's reason.
  const api = useMemo(() => (token ? new Api(token, (refused) => signOut(refused)) : null), [token, signOut]);

  useEffect(() => {
    if (!api) return;
    let live = true;
    setChecking(true);
    api
      .get<Me>('/v1/me')
      .then((who) => {
        if (!live) return;
        // Kept for the tab only once the server took it.
        if (token) tokenStore.write(token);
        setMe(who);
        setProblem(undefined);
      })
      .catch((err: unknown) => {
        if (!live) return;
        // A refused token signs out (in Api); anything else keeps the token and says what failed.
        if (!(err instanceof ApiError && err.problem.status === 401)) setProblem(asProblem(err));
      })
      .finally(() => live && setChecking(false));
    return () => {
      live = false;
    };
  }, [api, token, attempt]);

  const signed: Signed | null = useMemo(() => (api && me ? { api, me, signOut: () => signOut() } : null), [api, me, signOut]);

  if (!signed) {
    if (token && !problem) return <p class="muted loading-page">Signing in…</p>;
    return (
      <SignInPage
        busy={checking}
        problem={problem}
        onToken={(t) => {
          setProblem(undefined);
          setToken(t);
          setAttempt((n) => n + 1);
        }}
      />
    );
  }
  return (
    <SignedContext.Provider value={signed}>
      <Shell />
    </SignedContext.Provider>
  );
}

const NAV: Array<{ route: Route; label: string }> = [
  { route: { page: 'sessions' }, label: 'Sessions' },
  { route: { page: 'approvals' }, label: 'Approvals' },
  { route: { page: 'memories' }, label: 'Memories' },
  { route: { page: 'dashboard' }, label: 'Dashboard' },
];

const section = (route: Route): Route['page'] => (route.page === 'session' ? 'sessions' : route.page);

function Shell() {
  const { api, me, signOut } = useSigned();
  const route = useRoute();
  const [menuOpen, setMenuOpen] = useState(false);
  const inbox = usePoll((signal) => api.get<{ approvals: PendingApproval[] }>('/v1/approvals?limit=200', signal), 5_000, 'badge');
  const pending = inbox.data?.approvals.length ?? 0;

  useEffect(() => {
    setMenuOpen(false);
    document.getElementById('main')?.focus({ preventScroll: true });
  }, [route.page]);

  return (
    <>
      <a class="skip-link" href="#main" onClick={(e) => { e.preventDefault(); document.getElementById('main')?.focus(); }}>
        Skip to content
      </a>
      <header class="top">
        <span class="brand">durable-agent</span>
        <button type="button" class="menu-toggle" aria-expanded={menuOpen} aria-controls="main-nav" onClick={() => setMenuOpen((o) => !o)}>
          Menu
        </button>
        <nav id="main-nav" aria-label="Main" class={menuOpen ? 'open' : undefined}>
          <ul>
            {NAV.map((item) => (
              <li key={item.label}>
                <a href={hrefFor(item.route)} aria-current={section(route) === item.route.page ? 'page' : undefined}>
                  {item.label}
                  {item.route.page === 'approvals' && pending > 0 ? (
<Badge count={pending} what="pending" />
                  ) : null}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <div class="who">
          <span>
            <span class="visually-hidden">Signed in as </span>
            {whoIs(me)}
          </span>
          <button type="button" onClick={signOut}>
            Sign out
          </button>
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        <Page route={route} />
      </main>
    </>
  );
}

function Page({ route }: { route: Route }) {
  switch (route.page) {
    case 'sessions':
      return <SessionsPage />;
    case 'session':
      return <SessionPage sessionId={route.sessionId} />;
    case 'approvals':
      return <ApprovalsPage />;
    case 'memories':
      return <MemoriesPage {...(route.tenant ? { tenant: route.tenant } : {})} {...(route.user ? { user: route.user } : {})} />;
    case 'dashboard':
      return <DashboardPage />;
    case 'not-found':
      return <ProblemView problem={{ status: 404, title: 'No such page', detail: `The console has no page at ${route.path}.`, failureType: 'PageNotFound' }} />;
    default:
      return exhausted(route);
  }
}
