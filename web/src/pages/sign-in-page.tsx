import { useId, useState } from 'preact/hooks';
import type { Problem } from '../api';
import { ProblemView } from '../components/problem-view';

/**
 * Paste a bearer token (from `npm run api:token` or whoever runs the
 * server). It is checked against /v1/me before it is kept.
 */
export function SignInPage({ onToken, problem, busy }: { onToken: (token: string) => void; problem: Problem | undefined; busy: boolean }) {
  const id = useId();
  const [token, setToken] = useState('');
  return (
    <main id="main" class="sign-in" tabIndex={-1}>
      <h1>Sign in to the durable-agent console</h1>
      <form
        aria-label="Sign in"
        onSubmit={(e) => {
          e.preventDefault();
          if (token.trim()) onToken(token.trim());
        }}
      >
        <label for={id}>Bearer token</label>
        <input id={id} type="password" autoComplete="off" spellcheck={false} value={token} onInput={(e) => setToken(e.currentTarget.value)} aria-describedby={`${id}-hint`} />
        <p id={`${id}-hint`} class="hint">
          The token stays in this browser tab (session storage) and is sent only to this server.
        </p>
        <button type="submit" disabled={busy || token.trim() === ''}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
      {problem ? <ProblemView problem={problem} context="Not signed in" /> : null}
    </main>
  );
}
