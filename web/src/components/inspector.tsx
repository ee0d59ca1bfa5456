import { Fragment } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import type { Memory, Me, SessionCounters, SessionView } from '../api-types';
import { useSigned } from '../auth';
import { workflowIdFor } from '../api-types';
import { formatTime, json } from '../format';
import { hrefFor } from '../router';
import type { TurnView } from '../transcript';

const SUMMARY_SECTIONS = [
  ['userProfile', 'User profile'],
  ['preferences', 'Preferences'],
  ['decisions', 'Decisions'],
  ['pendingConfirmations', 'Pending confirmations'],
  ['unfinishedIntents', 'Unfinished intents'],
  ['notes', 'Notes'],
] as const;

/** The Temporal Web UI's page for this session's workflow, when the server knows where the UI is. */
export function temporalUiLink(me: Me, sessionId: string): string | undefined {
  if (!me.temporalUiUrl) return undefined;
  const base = me.temporalUiUrl.replace(/\/+$/, '');
  return `${base}/namespaces/${encodeURIComponent(me.temporalNamespace)}/workflows/${encodeURIComponent(workflowIdFor(sessionId))}`;
}

function Counters({ counters }: { counters: SessionCounters }) {
  return (
    <table class="counters">
      <caption>Counters</caption>
      <tbody>
        {Object.entries(counters).map(([name, value]) => (
          <tr key={name}>
            <th scope="row">{name}</th>
            <td>{value}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/**
 * The text of the memories recalled in a turn. The model cites memories by a
 * short id (the start of the memory id's hex); the owner and admins of the
 * tenant may read the owner's memories, so for them the ids are resolved.
 */
function useRecalledTexts(owner: { tenant: string; user: string } | undefined, shortIds: string[]): Map<string, Memory> {
  const { api, me } = useSigned();
  const [found, setFound] = useState<Map<string, Memory>>(new Map());
  const key = shortIds.join(',');
  const allowed = owner !== undefined && ((owner.tenant === me.tenant && owner.user === me.user) || (owner.tenant === me.tenant && me.roles.includes('admin')));
  useEffect(() => {
    if (!allowed || !owner || shortIds.length === 0) return;
    const controller = new AbortController();
    // Every status: a memory recalled then may have been superseded or deleted since.
    api
      .get<{ memories: Memory[] }>(`/v1/users/${encodeURIComponent(owner.tenant)}/${encodeURIComponent(owner.user)}/memories?status=active,superseded,expired,deleted&limit=500`, controller.signal)
      .then(({ memories }) => {
        const byShort = new Map<string, Memory>();
        for (const short of shortIds) {
          const hit = memories.filter((m) => m.id.replace(/^mem_/, '').startsWith(short));
          if (hit.length === 1) byShort.set(short, hit[0]!);
        }
        setFound(byShort);
      })
      .catch(() => undefined);
    return () => controller.abort();
  }, [allowed, owner?.tenant, owner?.user, key]);
  return found;
}

function RecalledIds({ label, ids, texts }: { label: string; ids: string[]; texts: Map<string, Memory> }) {
  if (ids.length === 0) return null;
  return (
    <>
      <span class="muted">{label}:</span>
      <ul>
        {ids.map((id) => {
          const m = texts.get(id);
          return (
            <li key={id}>
              <code>{id}</code> {m ? <>{m.text}{m.status !== 'active' ? <span class="muted"> ({m.status} since)</span> : null}</> : null}
            </li>
          );
        })}
      </ul>
    </>
  );
}

/**
 * What the session holds: the window of raw turns, the summary of older
 * ones, key facts, recalled memories, version, counters and the calls
 * waiting for a person, with a link to its workflow in the Temporal Web UI.
 */
export function Inspector({ me, sessionId, view, turns }: { me: Me; sessionId: string; view: SessionView | undefined; turns: TurnView[] }) {
  const link = temporalUiLink(me, sessionId);
  const recalled = turns.filter((t) => t.recalled && t.recalled.strong.length + t.recalled.weak.length > 0);
  const owner = view ? (view.owner ?? view.namespace) : undefined;
  const texts = useRecalledTexts(owner, [...new Set(recalled.flatMap((t) => [...t.recalled!.strong, ...t.recalled!.weak]))]);
  return (
    <aside class="inspector" aria-labelledby="inspector-title">
      <h2 id="inspector-title">Inspector</h2>
      {link ? (
        <p>
          <a href={link} target="_blank" rel="noopener noreferrer">
            Open {workflowIdFor(sessionId)} in the Temporal Web UI
          </a>
        </p>
      ) : (
        <p class="muted">The server was started without the Temporal Web UI's address, so there is no link to the workflow ({workflowIdFor(sessionId)}).</p>
      )}
      {!view ? (
        <p class="muted">The session has not started yet.</p>
      ) : (
        <>
          <dl class="facts">
            <dt>Version</dt>
            <dd>{view.version}</dd>
            <dt>Status</dt>
            <dd>
              {view.status}, {view.activity.replace(/_/g, ' ')}
            </dd>
            <dt>Owner</dt>
            <dd>{owner ? `${owner.tenant}/${owner.user}` : ''}</dd>
            <dt>Created</dt>
            <dd>{formatTime(view.createdAt)}</dd>
            <dt>Queued messages</dt>
            <dd>{view.queuedMessages}</dd>
          </dl>

          <h3>Pending confirmations ({view.pendingConfirmations.length})</h3>
          {view.pendingConfirmations.length === 0 ? (
            <p class="muted">None.</p>
          ) : (
            <ul>
              {view.pendingConfirmations.map((p) => (
                <li key={p.toolCallId}>
                  <code>{p.toolName}</code> ({p.risk}), {p.reason}; until {formatTime(p.expiresAt)}
                </li>
              ))}
            </ul>
          )}

          <h3>Window ({view.window.length} turns{view.unfoldedTurns ? `, ${view.unfoldedTurns} waiting to be summarized` : ''})</h3>
          {view.window.length === 0 ? (
            <p class="muted">Empty.</p>
          ) : (
            <ol class="window">
              {view.window.map((turn) => (
                <li key={turn.turnId}>
                  <details>
                    <summary>
                      {turn.turnId}: {turn.outcome}, {turn.messages.length} messages
                    </summary>
                    <ul>
                      {turn.messages.map((m, i) => (
                        <li key={i}>
                          <strong>{m.role}</strong>:{' '}
                          {m.role === 'assistant' ? [m.content ?? '', ...(m.tool_calls ?? []).map((c) => `→ ${c.function.name}(${c.function.arguments})`)].filter(Boolean).join(' ') : m.content}
                        </li>
                      ))}
                    </ul>
                  </details>
                </li>
              ))}
            </ol>
          )}

          <h3>Summary</h3>
          {SUMMARY_SECTIONS.every(([key]) => view.summary[key].length === 0) && view.summary.optionLists.length === 0 && view.summary.identifiers.length === 0 ? (
            <p class="muted">Nothing summarized yet (turns are folded in when they leave the window).</p>
          ) : (
            <dl class="summary">
              {SUMMARY_SECTIONS.filter(([key]) => view.summary[key].length > 0).map(([key, label]) => (
                <Fragment key={key}>
                  <dt>{label}</dt>
                  <dd>{view.summary[key].join('; ')}</dd>
                </Fragment>
              ))}
              {view.summary.identifiers.length > 0 ? (
                <>
                  <dt>Identifiers</dt>
                  <dd>{view.summary.identifiers.map((i) => `${i.label}: ${i.value}`).join('; ')}</dd>
                </>
              ) : null}
              {view.summary.optionLists.length > 0 ? (
                <>
                  <dt>Option lists</dt>
                  <dd>{view.summary.optionLists.map((o) => `${o.topic}: ${o.options.join(', ')}`).join('; ')}</dd>
                </>
              ) : null}
            </dl>
          )}

          <h3>Key facts ({view.keyFacts.length})</h3>
          {view.keyFacts.length === 0 ? (
            <p class="muted">None.</p>
          ) : (
            <ul>
              {view.keyFacts.map((f) => (
                <li key={`${f.subject}-${f.turnId}`}>
                  <strong>{f.subject}</strong>: {f.value} <span class="muted">({f.source}, {f.turnId})</span>
                </li>
              ))}
            </ul>
          )}

          <h3>Recalled memories</h3>
          {recalled.length === 0 ? (
            <p class="muted">None recalled in the turns shown.</p>
          ) : (
            <ul>
              {recalled.map((t) => (
                <li key={t.turnId}>
                  {t.turnId}
                  <RecalledIds label="strong" ids={t.recalled!.strong} texts={texts} />
                  <RecalledIds label="weak" ids={t.recalled!.weak} texts={texts} />
                </li>
              ))}
            </ul>
          )}
          {owner ? (
            <p>
              <a href={hrefFor({ page: 'memories', tenant: owner.tenant, user: owner.user })}>Browse the memories of {owner.user}</a>
            </p>
          ) : null}

          <Counters counters={view.counters} />

          {view.lastTurn?.error ? (
            <>
              <h3>Last turn's error</h3>
              <pre class="wrap">{json(view.lastTurn.error)}</pre>
            </>
          ) : null}
        </>
      )}
    </aside>
  );
}
