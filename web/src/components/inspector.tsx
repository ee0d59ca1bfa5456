import { Fragment } from 'preact';
import type { Me, SessionCounters, SessionView } from '../api-types';
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
 * What the session holds: the window of raw turns, the summary of older
 * ones, key facts, recalled memories, version, counters and the calls
 * waiting for a person, with a link to its workflow in the Temporal Web UI.
 */
export function Inspector({ me, sessionId, view, turns }: { me: Me; sessionId: string; view: SessionView | undefined; turns: TurnView[] }) {
  const link = temporalUiLink(me, sessionId);
  const recalled = turns.filter((t) => t.recalled && t.recalled.strong.length + t.recalled.weak.length > 0);
  const owner = view ? (view.owner ?? view.namespace) : undefined;
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
                  {t.turnId}: strong {t.recalled!.strong.join(', ') || 'none'}; weak {t.recalled!.weak.join(', ') || 'none'}
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
