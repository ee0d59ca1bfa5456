import { useId, useState } from 'preact/hooks';
import { asProblem, seg, type Problem } from '../api';
import { MEMORY_STATUSES, type Memory, type MemoryStatus } from '../api-types';
import { isAdmin, useSigned } from '../auth';
import { MemoryAuditTrail } from '../components/memory-audit-trail';
import { ProblemView } from '../components/problem-view';
import { formatTime } from '../format';
import { usePoll } from '../poll';
import { navigate } from '../router';

/**
 * A user's memories: search, filter by status (superseded, expired and
 * deleted ones too), delete one with a reason, read each one's audit trail
 * (what changed, why, by whom). A person sees their own; an admin of the
 * tenant may open anyone's.
 */
export function MemoriesPage({ tenant, user }: { tenant?: string; user?: string }) {
  const { me } = useSigned();
  const owner = { tenant: tenant ?? me.tenant, user: user ?? me.user };
  return <MemoryBrowser key={`${owner.tenant}/${owner.user}`} tenant={owner.tenant} user={owner.user} admin={isAdmin(me)} />;
}

const PAGE = 100;
/** The most one request returns (api/routes.ts). */
const MAX_SHOWN = 500;

function MemoryBrowser({ tenant, user, admin }: { tenant: string; user: string; admin: boolean }) {
  const { api } = useSigned();
  const ids = { user: useId(), q: useId(), kind: useId(), project: useId() };
  const [who, setWho] = useState(user);
  const [q, setQ] = useState('');
  const [kind, setKind] = useState('');
  // Memories a session kept under a project (its options' project) are listed apart from the user's others.
  const [project, setProject] = useState('');
  const inProject = project.trim() ? `?${new URLSearchParams({ project: project.trim() }).toString()}` : '';
  const [statuses, setStatuses] = useState<MemoryStatus[]>(['active']);
  // The newest matches first; "Show more" asks for more of them, up to what the API gives at once.
  const [limit, setLimit] = useState(PAGE);
  const params = new URLSearchParams({ ...(project.trim() ? { project: project.trim() } : {}), ...(q.trim() ? { q: q.trim() } : {}), ...(kind ? { kind } : {}), ...(statuses.length ? { status: statuses.join(',') } : {}), limit: String(limit) }).toString();
  const base = `/v1/users/${seg(tenant)}/${seg(user)}/memories`;
  const list = usePoll((signal) => api.get<{ memories: Memory[]; malformed: number; next?: string }>(`${base}?${params}`, signal), 15_000, `${base}?${params}`);
  const memories = list.data?.memories ?? [];

  const toggle = (s: MemoryStatus, on: boolean) => setStatuses((list) => (on ? [...list, s] : list.filter((x) => x !== s)));

  return (
    <section aria-labelledby="memories-title">
      <h1 id="memories-title">
        Memories of {tenant}/{user}
      </h1>
      {admin ? (
        <form
          class="filters"
          aria-label="Open another user's memories"
          onSubmit={(e) => {
            e.preventDefault();
            if (who.trim()) navigate({ page: 'memories', tenant, user: who.trim() });
          }}
        >
          <div class="field">
            <label for={ids.user}>User of {tenant}</label>
            <input id={ids.user} type="text" value={who} onInput={(e) => setWho(e.currentTarget.value)} />
          </div>
          <button type="submit">Open</button>
        </form>
      ) : null}
      <form class="filters" aria-label="Search memories" onSubmit={(e) => e.preventDefault()}>
        <div class="field">
          <label for={ids.q}>Search</label>
          <input id={ids.q} type="search" maxLength={200} value={q} onInput={(e) => setQ(e.currentTarget.value)} />
        </div>
        <div class="field">
          <label for={ids.project}>Project (empty: outside any project)</label>
          <input id={ids.project} type="text" maxLength={128} value={project} onInput={(e) => setProject(e.currentTarget.value)} />
        </div>
        <div class="field">
          <label for={ids.kind}>Kind</label>
          <select id={ids.kind} value={kind} onChange={(e) => setKind(e.currentTarget.value)}>
            <option value="">any</option>
            <option value="fact">fact</option>
            <option value="preference">preference</option>
            <option value="intent">intent</option>
          </select>
        </div>
        <fieldset class="field">
          <legend>Status</legend>
          {MEMORY_STATUSES.map((s) => (
            <label key={s} class="check">
              <input type="checkbox" checked={statuses.includes(s)} onChange={(e) => toggle(s, e.currentTarget.checked)} /> {s}
            </label>
          ))}
        </fieldset>
      </form>
      {list.problem ? <ProblemView problem={list.problem} context="The memories could not be read" /> : null}
      {list.data && list.data.malformed > 0 ? <p class="notice notice-info">{list.data.malformed} stored memories could not be read and are left out (their ids are in the worker log).</p> : null}
      {list.loading && !list.data ? <p class="muted">Loading…</p> : memories.length === 0 && !list.problem ? <p class="empty">No memories match.</p> : null}
      <ul class="cards">
        {memories.map((m) => (
          <li key={m.id}>
            <MemoryCard memory={m} path={`${base}/${seg(m.id)}`} query={inProject} onDeleted={list.refresh} />
          </li>
        ))}
      </ul>
      {list.data?.next ? (
        <p class="more">
          <span class="hint">The newest {memories.length} matches are shown{limit < MAX_SHOWN ? '' : '; narrow the search to see older ones'}.</span>{' '}
          {limit < MAX_SHOWN ? (
            <button type="button" onClick={() => setLimit((n) => Math.min(MAX_SHOWN, n + PAGE))}>
              Show more
            </button>
          ) : null}
        </p>
      ) : null}
    </section>
  );
}

function MemoryCard({ memory: m, path, query, onDeleted }: { memory: Memory; path: string; query: string; onDeleted: () => void }) {
  const { api } = useSigned();
  const reasonId = useId();
  const [reason, setReason] = useState('');
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<Problem | undefined>(undefined);
  const remove = async () => {
    setBusy(true);
    setProblem(undefined);
    try {
      await api.request('DELETE', `${path}${query}`, reason.trim() ? { body: { reason: reason.trim() } } : {});
      onDeleted();
    } catch (err) {
      setProblem(asProblem(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <article class="card memory-card" aria-label={`Memory ${m.id}`}>
      <p class="memory-text">{m.text}</p>
      <dl class="inline">
        <dt>Status</dt>
        <dd>
          <span class={`status status-${m.status}`}>{m.status}</span>
        </dd>
        <dt>Kind</dt>
        <dd>
          {m.kind}
          {m.polarity ? ` (${m.polarity})` : ''}
          {m.weight !== undefined ? `, weight ${m.weight}` : ''}
        </dd>
        {m.key ? (
          <>
            <dt>Key</dt>
            <dd>
              {m.key}
              {m.value ? ` = ${m.value}` : ''}
            </dd>
          </>
        ) : null}
        <dt>Origin</dt>
        <dd>
          {m.origin === 'user' ? 'said by the user' : 'confirmed by a tool'} in session {m.sessionId}
        </dd>
        <dt>Created</dt>
        <dd>{formatTime(m.createdAt)}</dd>
        <dt>Updated</dt>
        <dd>{formatTime(m.updatedAt)}</dd>
        <dt>Expires</dt>
        <dd>{formatTime(m.expiresAt)}</dd>
        <dt>Id</dt>
        <dd>
          <code>{m.id}</code>
        </dd>
      </dl>
      {m.status === 'active' ? (
        <form
          class="decision"
          aria-label={`Delete memory ${m.id}`}
          onSubmit={(e) => {
            e.preventDefault();
            void remove();
          }}
        >
          <label for={reasonId}>Reason for deleting (kept in the audit trail)</label>
          <input id={reasonId} type="text" maxLength={2000} value={reason} onInput={(e) => setReason(e.currentTarget.value)} disabled={busy} />
          <div class="buttons">
            <button type="submit" class="deny" disabled={busy}>
              Delete
            </button>
          </div>
        </form>
      ) : null}
      {problem ? <ProblemView problem={problem} context="Not deleted" /> : null}
      <MemoryAuditTrail path={path} query={query} memoryId={m.id} updatedAt={m.updatedAt} />
    </article>
  );
}
