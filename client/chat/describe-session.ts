import type { SessionView } from '../../workflows/session-types';
import { oneLine, withoutControls } from './render-events';

/** A few readable lines about a session, for `/session`. */
export function describeSession(received: SessionView): string[] {
  // Tool names, the last answer and its error come from the model and tools: shown, never acted on by the terminal.
  const view = withoutControls(received);
  const c = view.counters;
  const pending = view.pendingConfirmations.map((p) => `${p.toolName} (${p.toolCallId})`).join(', ') || 'none';
  const last = view.lastTurn;
  return [
    `session ${view.sessionId} (${view.namespace.tenant}/${view.namespace.user}, channel ${view.channel}): ${view.status}, ${view.activity.replace(/_/g, ' ')}, version ${view.version}`,
    `  turns ${c.turns} · model calls ${c.modelCalls} · tool calls ${c.toolCalls} (${c.toolFailures} failed) · interrupts ${c.interrupts} · confirmations ${c.confirmationsRequested} · continued as new ${c.continuedAsNew}`,
    `  running: ${view.currentTurnId ? `${view.currentTurnId}, step ${view.currentStep}` : 'nothing'} · queued messages ${view.queuedMessages} · awaiting confirmation: ${pending}`,
    last ? `  last turn: ${last.turnId} ${last.outcome}${last.error ? ` (${last.error})` : ''}: ${oneLine(last.text, 100) || '(no text)'}` : '  no turn finished yet',
    `  started ${view.createdAt}, ${view.window.length} turn(s) in the context window`,
  ];
}
