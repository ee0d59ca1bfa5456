import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import type { PendingApproval } from '../api-types';
import { useSigned } from '../auth';
import { CallArguments, argumentsCut } from '../components/call-arguments';
import { DecisionForm, type Decided } from '../components/decision-form';
import { SHOW_ALL_FIRST } from '../components/tool-card';
import { ProblemView } from '../components/problem-view';
import { formatTime, json } from '../format';
import { usePoll } from '../poll';
import { hrefFor } from '../router';

const text = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
/** One request: a later call under the same id (models reuse them) is a card of its own. */
const keyOf = (a: PendingApproval) => `${a.sessionId}/${a.toolCallId}/${text(a.confirmation.confirmationId) ?? ''}`;

/** The approvals inbox: every call held for a person in the sessions this person may decide. */
export function ApprovalsPage() {
  const { api } = useSigned();
  const inbox = usePoll((signal) => api.get<{ approvals: PendingApproval[]; unreadable?: string[] }>('/v1/approvals', signal), 3_000, 'approvals');
  // Sessions holding calls that could not be read now: never "nothing is waiting" while there are any.
  const unreadable = inbox.data?.unreadable ?? [];
  // Decided here: kept on screen with the outcome, even after the server stops listing them.
  const [decided, setDecided] = useState<Array<PendingApproval & { decision: Decided }>>([]);
  const decidedKeys = new Set(decided.map(keyOf));
  const pending = (inbox.data?.approvals ?? []).filter((a) => !decidedKeys.has(keyOf(a)));

  return (
    <section aria-labelledby="approvals-title">
      <h1 id="approvals-title">Approvals</h1>
      <p class="muted">Tool calls held until a person decides. The model is told the reason you give.</p>
      {inbox.problem ? <ProblemView problem={inbox.problem} context="The inbox could not be refreshed" /> : null}
      {unreadable.length > 0 ? (
        <p class="problem" role="alert">
          {unreadable.length === 1 ? 'One session' : `${unreadable.length} sessions`} waiting for approval could not be read just now (the workers are slow or down); their calls are not listed here: {unreadable.join(', ')}.
        </p>
      ) : null}
      {inbox.loading && !inbox.data ? <p class="muted">Loading…</p> : pending.length === 0 && unreadable.length === 0 ? <p class="empty">Nothing is waiting for approval.</p> : null}
      <ul class="cards">
        {pending.map((a) => (
          <li key={keyOf(a)}>
            <ApprovalCard
              item={a}
              footer={(blocked) => (
                <DecisionForm
                  sessionId={a.sessionId}
                  toolCallId={a.toolCallId}
                  confirmationId={text(a.confirmation.confirmationId)}
                  toolName={a.toolName}
                  approveBlocked={blocked}
                  onDecided={(d) => setDecided((list) => [{ ...a, decision: d }, ...list])}
                />
              )}
            />
          </li>
        ))}
        {decided.map((a) => (
          <li key={keyOf(a)}>
            <ApprovalCard
              item={a}
              footer={() => (
                <p class={`outcome ${a.decision.approved ? 'outcome-completed' : 'outcome-failed'}`} role="status">
                  {a.decision.approved ? 'Approved' : 'Denied'}
                  {a.decision.reason ? `: ${a.decision.reason}` : ''}. {a.decision.approved ? 'The call runs now.' : 'The model is told.'}
                </p>
              )}
            />
          </li>
        ))}
      </ul>
    </section>
  );
}

/** One held call; `footer` gets why Approve must wait (part of the call not yet on screen), if it must. */
function ApprovalCard({ item, footer }: { item: PendingApproval; footer: (approveBlocked: string | undefined) => ComponentChildren }) {
  const c = item.confirmation;
  const [seenAll, setSeenAll] = useState(false);
  const blocked = argumentsCut(c.arguments) && !seenAll ? SHOW_ALL_FIRST : undefined;
  return (
    <article class="card approval-card" aria-label={`${item.toolName} in session ${item.sessionId}`}>
      <header>
        <h2>
          <code>{item.toolName}</code> <span class="risk">{item.risk}</span>
        </h2>
        <a href={hrefFor({ page: 'session', sessionId: item.sessionId })}>Session {item.sessionId}</a>
      </header>
      <dl>
        <dt>Asked by</dt>
        <dd>
          {item.tenant}/{item.user}
          {item.requestedAt ? `, ${formatTime(item.requestedAt)}` : ''}
        </dd>
        {text(c.reason) ? (
          <>
            <dt>Why it waits</dt>
            <dd>{text(c.reason)}</dd>
          </>
        ) : null}
        {text(c.expiresAt) ? (
          <>
            <dt>Counts as denied after</dt>
            <dd>{formatTime(text(c.expiresAt))}</dd>
          </>
        ) : null}
        <dt>Arguments</dt>
        <dd>
          <CallArguments value={c.arguments} onSeenAll={() => setSeenAll(true)} />
        </dd>
        {c.change ? (
          <>
            <dt>The tool changed</dt>
            <dd>
              <pre class="wrap">{json(c.change)}</pre>
            </dd>
          </>
        ) : null}
      </dl>
      {footer(blocked)}
    </article>
  );
}
