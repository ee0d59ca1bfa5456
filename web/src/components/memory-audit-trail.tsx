import { useEffect, useId, useState } from 'preact/hooks';
import { asProblem, type Problem } from '../api';
import type { MemoryAudit, MemoryAuditEntry } from '../api-types';
import { useSigned } from '../auth';
import { formatTime } from '../format';
import { exhausted } from '../never';
import { ProblemView } from './problem-view';

/** Who or what made a change, in words. */
export function actorText(actor: MemoryAuditEntry['actor']): string {
  const who = actor.principal ? ` ${actor.principal.tenant}/${actor.principal.user}` : '';
  const session = actor.sessionId ? ` in session ${actor.sessionId}` : '';
  switch (actor.by) {
    case 'user':
      return `the user${who}`;
    case 'admin':
      return `the admin${who}`;
    case 'extraction':
      return `memory extraction${session}`;
    case 'tool':
      return `a tool call${session}`;
    case 'sweep':
      return 'the expiry sweep';
    case 'import':
      return 'an import';
    case 'maintenance':
      return 'maintenance (re-embedding)';
    default:
      return exhausted(actor.by) ?? 'unknown';
  }
}

/** What one change did to the memory: its text before and after, or its status. */
function changeText(entry: MemoryAuditEntry): string {
  const { before, after } = entry;
  if (entry.purgedAt) return 'content removed after the audit retention';
  if (!before) return after.text;
  if (before.text !== after.text) return `${before.text} → ${after.text}`;
  if (before.status !== after.status) return `${before.status} → ${after.status}`;
  return after.text;
}

/**
 * A memory's audit trail, loaded when the person opens it (and again when
 * the memory changes): each version's action, when, by whom, why, and what
 * it changed.
 */
export function MemoryAuditTrail({ path, query = '', memoryId, updatedAt }: { path: string; query?: string; memoryId: string; updatedAt: string }) {
  const { api } = useSigned();
  const regionId = useId();
  const [open, setOpen] = useState(false);
  const [audit, setAudit] = useState<MemoryAudit | undefined>(undefined);
  const [problem, setProblem] = useState<Problem | undefined>(undefined);

  useEffect(() => {
    if (!open) return;
    const controller = new AbortController();
    setProblem(undefined);
    api.get<MemoryAudit>(`${path}/audit${query}`, controller.signal).then(
      (a) => setAudit(a),
      (err: unknown) => {
        if (!controller.signal.aborted) setProblem(asProblem(err));
      },
    );
    return () => controller.abort();
    // A change to the memory (a deletion, say) is a new entry: read the trail again.
  }, [open, path, query, api, updatedAt]);

  return (
    <div class="audit">
      <button type="button" class="secondary" aria-expanded={open} aria-controls={regionId} onClick={() => setOpen((o) => !o)}>
        {open ? 'Hide audit trail' : 'Show audit trail'}
      </button>
      <section id={regionId} aria-label={`Audit trail of memory ${memoryId}`} hidden={!open}>
        {problem ? <ProblemView problem={problem} context="The audit trail could not be read" /> : null}
        {open && !audit && !problem ? <p class="muted">Loading…</p> : null}
        {audit ? (
          <ol class="audit-entries">
            {audit.entries.map((e) => (
              <li key={e.version}>
                <p>
                  <strong>
                    v{e.version} {e.action}
                  </strong>{' '}
                  <time dateTime={e.at}>{formatTime(e.at)}</time> by {actorText(e.actor)}
                </p>
                <p>Reason: {e.reason}</p>
                <p class="wrap">{changeText(e)}</p>
              </li>
            ))}
          </ol>
        ) : null}
        {audit && audit.malformed > 0 ? <p class="notice notice-info">{audit.malformed} stored entries could not be read and are left out (see the worker log).</p> : null}
      </section>
    </div>
  );
}
