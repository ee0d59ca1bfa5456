import { useId, useState } from 'preact/hooks';
import { asProblem, seg, type Problem } from '../api';
import { useSigned } from '../auth';
import { ProblemView } from './problem-view';

export type Decided = { approved: boolean; reason?: string };

/**
 * Approve or Deny a held tool call, with an optional reason the model is
 * told. Used by the approval cards in the chat and by the inbox.
 */
export function DecisionForm({
  sessionId,
  toolCallId,
  confirmationId,
  toolName,
  onDecided,
  approveBlocked,
}: {
  sessionId: string;
  toolCallId: string;
  /** The request shown: the decision is taken only if it still waits (a later call may reuse the id). */
  confirmationId?: string;
  toolName: string;
  onDecided?: (d: Decided) => void;
  /** Why Approve waits (part of the call is not on screen yet); Deny never waits. */
  approveBlocked?: string;
}) {
  const { api } = useSigned();
  const reasonId = useId();
  const [reason, setReason] = useState('');
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<Problem | undefined>(undefined);

  const decide = async (approved: boolean) => {
    setBusy(true);
    setProblem(undefined);
    const trimmed = reason.trim();
    try {
      await api.post(`/v1/sessions/${seg(sessionId)}/tool-calls/${seg(toolCallId)}/decision`, { approved, ...(trimmed ? { reason: trimmed } : {}), ...(confirmationId ? { confirmationId } : {}) });
      onDecided?.({ approved, ...(trimmed ? { reason: trimmed } : {}) });
    } catch (err) {
      setProblem(asProblem(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form
      class="decision"
      aria-label={`Decide ${toolName}`}
      onSubmit={(e) => {
        e.preventDefault();
      }}
    >
      <label for={reasonId}>Reason (optional, the model is told)</label>
      <input id={reasonId} type="text" maxLength={2000} value={reason} onInput={(e) => setReason(e.currentTarget.value)} disabled={busy} />
      <div class="buttons">
        <button type="button" class="approve" disabled={busy || approveBlocked !== undefined} title={approveBlocked} onClick={() => void decide(true)}>
          Approve
        </button>
        <button type="button" class="deny" disabled={busy} onClick={() => void decide(false)}>
          Deny
        </button>
      </div>
      {approveBlocked ? <p class="muted">{approveBlocked}</p> : null}
      {problem ? <ProblemView problem={problem} context="The decision was not taken" /> : null}
    </form>
  );
}
