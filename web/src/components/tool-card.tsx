import { useState } from 'preact/hooks';
import type { ToolPart } from '../transcript';
import { CallArguments, argumentsCut } from './call-arguments';
import { DecisionForm } from './decision-form';
import { formatDuration, formatTime } from '../format';

/** What Approve waits for while part of a held call is not on screen. */
export const SHOW_ALL_FIRST = 'Show the whole call before approving it.';

/** Where a call stands, in words. */
export function toolStatus(part: ToolPart, turnOver: boolean): string {
  if (part.result) {
    if (part.result.ok) return 'Done';
    if (part.result.errorType === 'ToolDeclined') return 'Denied';
    return `Failed${part.result.errorType ? ` (${part.result.errorType})` : ''}`;
  }
  if (part.confirmation && !part.decision) return turnOver ? 'No longer waiting' : 'Waiting for approval';
  if (part.decision && !part.decision.approved) return 'Denied';
  return turnOver ? 'Stopped' : 'Running';
}

/**
 * One tool call in the chat: its name and arguments, progress, the approval
 * it waits for (Approve / Deny with a reason), then its result and duration.
 */
export function ToolCard({ sessionId, part, turnOver }: { sessionId: string; part: ToolPart; turnOver: boolean }) {
  const status = toolStatus(part, turnOver);
  const waiting = part.confirmation && !part.decision && !part.result && !turnOver;
  const { progress, decision, result, confirmation } = part;
  const [seenAll, setSeenAll] = useState(false);
  const blocked = confirmation && argumentsCut(confirmation.arguments) && !seenAll ? SHOW_ALL_FIRST : undefined;
  return (
    <article class={`tool-card${waiting ? ' waiting' : ''}`} aria-label={`Tool call ${part.toolName}`}>
      <header>
        <h4>
          <code>{part.toolName}</code>
        </h4>
        <span class={`status status-${status.split(' ')[0]!.toLowerCase()}`} role="status">
          {status}
        </span>
      </header>
      <dl>
        {part.argumentsPreview ? (
          <>
            <dt>Arguments</dt>
            <dd>
              <code class="wrap">{part.argumentsPreview}</code>
            </dd>
          </>
        ) : null}
        {progress ? (
          <>
            <dt>Progress</dt>
            <dd>
              {progress.total ? <progress value={progress.progress} max={progress.total} aria-label={`Progress of ${part.toolName}`} /> : null} {progress.progress}
              {progress.total ? ` of ${progress.total}` : ''}
              {progress.message ? `: ${progress.message}` : ''}
            </dd>
          </>
        ) : null}
        {confirmation ? (
          <>
            <dt>Needs approval</dt>
            <dd>
              {confirmation.reason} (risk <strong>{confirmation.risk}</strong>; asked {formatTime(confirmation.requestedAt)}, counts as denied after {formatTime(confirmation.expiresAt)})
            </dd>
          </>
        ) : null}
        {confirmation && waiting ? (
          <>
            <dt>Full arguments</dt>
            <dd>
              <CallArguments value={confirmation.arguments} onSeenAll={() => setSeenAll(true)} />
            </dd>
          </>
        ) : null}
        {decision ? (
          <>
            <dt>Decision</dt>
            <dd>
              {decision.approved ? 'Approved' : 'Denied'}
              {decision.decidedBy === 'user' ? (decision.by ? ` by ${decision.by}` : '') : decision.decidedBy === 'timeout' ? ' (nobody answered in time)' : ' (the turn was stopped)'}
              {decision.reason ? `: ${decision.reason}` : ''}
            </dd>
          </>
        ) : null}
        {result ? (
          <>
            <dt>Result</dt>
            <dd>
              <code class="wrap">{result.preview}</code>
            </dd>
            <dt>Duration</dt>
            <dd>
              {formatDuration(result.durationMs)}
              {result.waitedMs !== undefined ? `, after waiting ${formatDuration(result.waitedMs)} for approval` : ''}
            </dd>
          </>
        ) : null}
      </dl>
      {waiting ? <DecisionForm sessionId={sessionId} toolCallId={part.toolCallId} confirmationId={part.confirmation?.confirmationId} toolName={part.toolName} approveBlocked={blocked} /> : null}
    </article>
  );
}
