import type { TurnOutcome } from '../api-types';
import type { NoticePart, TurnView } from '../transcript';
import { exhausted } from '../never';
import { ToolCard } from './tool-card';

const OUTCOME: Record<TurnOutcome, string> = {
  completed: 'Completed',
  interrupted: 'Interrupted',
  step_limit: 'Stopped at the step limit',
  failed: 'Failed',
  budget_exceeded: 'Stopped: daily budget reached',
};

export interface ShownTurn {
  turn: TurnView;
  /** What the person sent; null when the turn left the window and the console did not see it sent. */
  message: string | null;
}

function Notice({ notice }: { notice: NoticePart }) {
  return (
    <div class={`notice notice-${notice.tone}`} role={notice.tone === 'error' ? 'alert' : undefined}>
      <strong>{notice.title}</strong>: {notice.message}
    </div>
  );
}

/**
 * The conversation: each turn is the person's message, then the answer as it
 * streams (text in a polite live region), with tool and approval cards where
 * the calls happened.
 */
export function ChatTranscript({ sessionId, turns, notices }: { sessionId: string; turns: ShownTurn[]; notices: NoticePart[] }) {
  if (turns.length === 0 && notices.length === 0) return <p class="empty">No messages yet. Write the first one below.</p>;
  return (
    <>
      <ol class="turns">
        {turns.map(({ turn, message }) => {
          const over = turn.outcome !== undefined;
          const hasText = turn.parts.some((p) => p.kind === 'text' && p.text !== '');
          return (
            <li key={turn.turnId} class="turn">
              <div class="bubble user-bubble">
                <span class="speaker">You</span>
                <p class="message-text">{message ?? <em>(earlier message, folded into the summary)</em>}</p>
              </div>
              <section class="bubble answer" aria-label={`Answer to ${turn.turnId}`}>
                <span class="speaker">Agent</span>
                {turn.parts.map((part, i) => {
                  switch (part.kind) {
                    case 'text':
                      return part.withdrawn ? (
                        <p key={i} class="answer-text withdrawn">
                          <del>{part.text}</del>
                        </p>
                      ) : (
                        <p key={i} class="answer-text" aria-live="polite">
                          {part.text}
                        </p>
                      );
                    case 'tool':
                      return <ToolCard key={`${part.toolCallId}-${i}`} sessionId={sessionId} part={part} turnOver={over} />;
                    case 'input':
                      return (
                        <div key={part.inputId} class="notice notice-info">
                          <strong>{part.server} asks</strong>: {part.message} {part.answer ? `(answered: ${part.answer})` : `(answer it from the terminal chat, or with POST /v1/sessions/${sessionId}/inputs/${part.inputId})`}
                        </div>
                      );
                    case 'notice':
                      return <Notice key={i} notice={part} />;
                    default:
                      return exhausted(part);
                  }
                })}
                {!over && !hasText ? <p class="thinking">Working…</p> : null}
                {over ? <p class={`outcome outcome-${turn.outcome}`}>{OUTCOME[turn.outcome!]}</p> : null}
              </section>
            </li>
          );
        })}
      </ol>
      {notices.map((n, i) => (
        <Notice key={i} notice={n} />
      ))}
    </>
  );
}
