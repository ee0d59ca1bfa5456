import { useId, useState } from 'preact/hooks';
import { SESSION_ID_PATTERN, SESSION_STATES, SESSION_STATUSES, type SessionSummary } from '../api-types';
import { canApprove, useSigned } from '../auth';
import { Badge } from '../components/badge';
import { ProblemView } from '../components/problem-view';
import { formatTime, newSessionId } from '../format';
import { usePoll } from '../poll';
import { hrefFor, navigate } from '../router';

const label = (status: string) => status.replace(/_/g, ' ');

/**
 * Sessions the person may read, refreshed every few seconds: running ones,
 * those waiting for approval first (the API lists them so), and on request
 * closed ones too.
 */
export function SessionsPage() {
  const { api, me } = useSigned();
  const userId = useId();
  const statusId = useId();
  const openId = useId();
  const [user, setUser] = useState('');
  const showId = useId();
  const [status, setStatus] = useState('');
  // '' follows the API: running sessions, or any with a status picked.
  const [show, setShow] = useState('');
  const [open, setOpen] = useState('');
  const query = new URLSearchParams({ ...(user.trim() ? { user: user.trim() } : {}), ...(status ? { status } : {}), ...(show ? { state: show } : {}) }).toString();
  const list = usePoll((signal) => api.get<{ sessions: SessionSummary[] }>(`/v1/sessions${query ? `?${query}` : ''}`, signal), 3_000, query);
  const sessions = list.data?.sessions ?? [];
  const approver = canApprove(me);
  const openValid = SESSION_ID_PATTERN.test(open.trim());

  return (
    <section aria-labelledby="sessions-title">
      <div class="page-head">
        <h1 id="sessions-title">Sessions</h1>
        <button type="button" onClick={() => navigate({ page: 'session', sessionId: newSessionId() })}>
          New session
        </button>
      </div>
      <form class="filters" aria-label="Filter sessions" onSubmit={(e) => e.preventDefault()}>
        <div class="field">
          <label for={userId}>User</label>
          <input
            id={userId}
            type="text"
            value={approver ? user : me.user}
            disabled={!approver}
            placeholder={approver ? 'any user of the tenant' : undefined}
            onInput={(e) => setUser(e.currentTarget.value)}
            aria-describedby={approver ? undefined : `${userId}-note`}
          />
          {approver ? null : (
            <span id={`${userId}-note`} class="hint">
              You see your own sessions; approvers see the tenant's.
            </span>
          )}
        </div>
        <div class="field">
          <label for={statusId}>Status</label>
          <select id={statusId} value={status} onChange={(e) => setStatus(e.currentTarget.value)}>
            <option value="">any</option>
            {SESSION_STATUSES.map((s) => (
              <option key={s} value={s}>
                {label(s)}
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for={showId}>Show</label>
          <select id={showId} value={show} onChange={(e) => setShow(e.currentTarget.value)} aria-describedby={`${showId}-note`}>
            <option value="">{status ? 'running and closed' : 'running'} (default)</option>
            {SESSION_STATES.map((s) => (
              <option key={s.value} value={s.value}>
                {s.label}
              </option>
            ))}
          </select>
          <span id={`${showId}-note`} class="hint">
            Closed sessions come after the running ones.
          </span>
        </div>
      </form>
      <form
        class="filters"
        aria-label="Open a session by id"
        onSubmit={(e) => {
          e.preventDefault();
          if (openValid) navigate({ page: 'session', sessionId: open.trim() });
        }}
      >
        <div class="field">
          <label for={openId}>Session id</label>
          <input id={openId} type="text" value={open} onInput={(e) => setOpen(e.currentTarget.value)} aria-invalid={open !== '' && !openValid} />
        </div>
        <button type="submit" disabled={!openValid}>
          Open
        </button>
      </form>

      {list.problem ? <ProblemView problem={list.problem} context="The list could not be refreshed" /> : null}
      {list.loading && !list.data ? (
        <p class="muted">Loading…</p>
      ) : sessions.length === 0 ? (
        <p class="empty">No {show === 'closed' ? 'closed ' : show || status ? '' : 'running '}sessions{user || status ? ' match these filters' : ''}.</p>
      ) : (
        <div class="table-scroll">
          <table class="sessions">
            <caption class="visually-hidden">Sessions, those waiting for approval first, closed ones last</caption>
            <thead>
              <tr>
                <th scope="col">Session</th>
                <th scope="col">User</th>
                <th scope="col">Status</th>
                <th scope="col">Version</th>
                <th scope="col">Started</th>
                <th scope="col">Closed</th>
              </tr>
            </thead>
            <tbody>
              {sessions.map((s) => (
                <tr key={s.sessionId} class={s.status === 'awaiting_approval' ? 'waiting' : undefined}>
                  <td>
                    <a href={hrefFor({ page: 'session', sessionId: s.sessionId })}>{s.sessionId}</a>
                  </td>
                  <td>
                    {s.tenant}/{s.user}
                  </td>
                  <td>
                    {label(s.status)}
                    {s.pendingApprovals > 0 ? (
<Badge count={s.pendingApprovals} what="waiting for approval" />
                    ) : null}
                  </td>
                  <td>{s.version ?? ''}</td>
                  <td>{formatTime(s.startedAt)}</td>
                  <td>{formatTime(s.closedAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
